// The ledger's real content arrives with the ledger issue (accounts, journal, rules, balances).
export {}
