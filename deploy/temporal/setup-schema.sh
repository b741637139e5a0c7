#!/bin/sh
# Creates (when missing) and migrates Temporal's two PostgreSQL databases
# with Temporal's SQL tool (temporal-sql-tool), from the schemas built into
# it, so the tool's version is the schema's. Every step is idempotent:
# create ignores an existing database, setup-schema keeps a newer version,
# update-schema applies only what is missing. So compose's one-shot
# temporal-schema service runs it on every `docker compose up`, an image
# upgrade (server and admin-tools moved together) migrates the schema, and
# `make stack` runs this same script with the tool it builds.
set -eu

: "${SQL_HOST:?}" "${SQL_USER:?}" "${SQL_PASSWORD:?}"
export SQL_PLUGIN=postgres12 SQL_PORT="${SQL_PORT:-5432}"

# The first create also waits for PostgreSQL to accept connections.
tries=0
until temporal-sql-tool --db temporal create-database; do
  tries=$((tries + 1))
  if [ "$tries" -ge 60 ]; then
    echo "PostgreSQL at $SQL_HOST:$SQL_PORT did not accept connections" >&2
    exit 1
  fi
  echo "waiting for PostgreSQL at $SQL_HOST:$SQL_PORT"
  sleep 1
done

for db in temporal:temporal temporal_visibility:visibility; do
  name=${db%%:*}
  schema=postgresql/v12/${db#*:}
  temporal-sql-tool --db "$name" create-database
  temporal-sql-tool --db "$name" setup-schema -v 0.0
  temporal-sql-tool --db "$name" update-schema --schema-name "$schema"
done
echo "Temporal schema is up to date"
