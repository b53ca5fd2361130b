CREATE SEQUENCE "public"."users_hd_index_seq" INCREMENT BY 1 MINVALUE 0 MAXVALUE 2147483647 START WITH 0 CACHE 1;--> statement-breakpoint
CREATE TABLE "users" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"wallet_address" varchar(42) NOT NULL,
	"hd_index" integer DEFAULT nextval('users_hd_index_seq') NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "users_wallet_address_key" UNIQUE("wallet_address"),
	CONSTRAINT "users_hd_index_key" UNIQUE("hd_index")
);
--> statement-breakpoint
CREATE TABLE "siwe_nonces" (
	"nonce" varchar(64) PRIMARY KEY NOT NULL,
	"issued_at" timestamp with time zone NOT NULL,
	"expires_at" timestamp with time zone NOT NULL,
	"used_at" timestamp with time zone
);
--> statement-breakpoint
CREATE INDEX "siwe_nonces_expires_at_idx" ON "siwe_nonces" USING btree ("expires_at");