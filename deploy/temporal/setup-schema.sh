#!/bin/sh
# Creates (when missing) and migrates Temporal's two PostgreSQL databases.
# Every step is idempotent: create ignores an existing database, setup-schema
# keeps a newer version, update-schema applies only what is missing. So this
# one-shot service runs on every `docker compose up`, and an image upgrade
# (server and admin-tools moved together) migrates the schema.
set -eu

: "${SQL_HOST:?}" "${SQL_USER:?}" "${SQL_PASSWORD:?}"
export SQL_PLUGIN=postgres12 SQL_PORT="${SQL_PORT:-5432}"
schema=/etc/temporal/schema/postgresql/v12

until nc -z "$SQL_HOST" "$SQL_PORT"; do
  echo "waiting for PostgreSQL at $SQL_HOST:$SQL_PORT"
  sleep 1
done

for db in temporal:temporal temporal_visibility:visibility; do
  name=${db%%:*}
  dir=${db#*:}
  temporal-sql-tool --db "$name" create
  temporal-sql-tool --db "$name" setup-schema -v 0.0
  temporal-sql-tool --db "$name" update-schema -d "$schema/$dir/versioned"
done
echo "Temporal schema is up to date"
