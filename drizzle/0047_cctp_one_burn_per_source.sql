-- One CCTP transfer burning per source chain at a time (docs/chains.md "The L2 route"). The burns of
-- one source are signed by one hot wallet, which approves the TokenMessengerV2 for each: an ERC-20
-- approve sets the allowance, it does not add to it, and a burn spends it. Two refills from L1 at once
-- (one per L2, each under its own route's lock) approved in turn, the first burn spent the allowance,
-- and the second waited forever for an allowance its own mined approve no longer gave. With this
-- index the second refill's insert finds the first burning and waits for the next run; the first
-- leaves `burning` once its burn is final, which is when the allowance it used is spent.
CREATE UNIQUE INDEX "cctp_transfers_one_burning_per_source" ON "cctp_transfers" USING btree ("source_chain") WHERE "state" = 'burning';
