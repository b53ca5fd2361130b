CREATE TABLE "signal_state" (
	"asset" text NOT NULL,
	"side" text NOT NULL,
	"paused" boolean NOT NULL,
	"reason" text,
	"signal_id" text NOT NULL,
	"source" text NOT NULL,
	"signal_at" timestamp with time zone NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "signal_state_asset_side_pk" PRIMARY KEY("asset","side")
);
