-- A contract account signs in on its own chain (docs/architecture.md "Sign-in"): a user whose
-- sign-in was verified by a contract (ERC-1271, ERC-6492) is bound to the chain id it was verified
-- on, and that address's contract signatures from any other chain are refused. Null: bound to no
-- chain (a user who signed in with a key, whose signatures are good on every chain).
ALTER TABLE "users" ADD COLUMN "contract_chain_id" integer;
