CREATE TABLE "price_candles" (
	"asset" text NOT NULL,
	"interval" text NOT NULL,
	"bucket_start" timestamp with time zone NOT NULL,
	"open_e18" numeric(78, 0) NOT NULL,
	"high_e18" numeric(78, 0) NOT NULL,
	"low_e18" numeric(78, 0) NOT NULL,
	"close_e18" numeric(78, 0) NOT NULL,
	"tick_count" integer NOT NULL,
	"first_tick_at" timestamp with time zone NOT NULL,
	"last_tick_at" timestamp with time zone NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "price_candles_pk" PRIMARY KEY("asset","interval","bucket_start"),
	CONSTRAINT "price_candles_interval_check" CHECK ("price_candles"."interval" in ('1m', '5m', '1h', '1d')),
	CONSTRAINT "price_candles_range_check" CHECK ("price_candles"."low_e18" <= "price_candles"."high_e18" and "price_candles"."low_e18" > 0)
);
