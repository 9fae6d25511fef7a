#!/bin/sh
# Creates Temporal's two databases on PostgreSQL and brings their schemas up to date with
# temporal-sql-tool. Shared by docker-compose.yml (its temporal-schema service runs it in the
# temporalio/admin-tools image) and by `npm run test:cluster` (with the binaries of
# scripts/ensure-temporal-server.sh). Every step is idempotent: create skips a database that exists,
# setup-schema skips a versioned schema, update-schema applies only the missing versions; so it reruns
# safely, including after a server upgrade (a newer schema dir brings the new versions).
#
# Settings (environment):
#   SQL_HOST, SQL_PORT, SQL_USER, SQL_PASSWORD   where PostgreSQL is and who creates the databases
#   TEMPORAL_SQL_TOOL      the temporal-sql-tool binary (default: temporal-sql-tool on PATH)
#   TEMPORAL_SCHEMA_DIR    the postgresql/v12 schema dir of the server's version
#                          (default: /etc/temporal/schema/postgresql/v12, where admin-tools has it)
#   TEMPORAL_DB, TEMPORAL_VISIBILITY_DB   database names (default: temporal, temporal_visibility)
set -eu
tool="${TEMPORAL_SQL_TOOL:-temporal-sql-tool}"
schema="${TEMPORAL_SCHEMA_DIR:-/etc/temporal/schema/postgresql/v12}"
main_db="${TEMPORAL_DB:-temporal}"
visibility_db="${TEMPORAL_VISIBILITY_DB:-temporal_visibility}"
for dir in "$schema/temporal/versioned" "$schema/visibility/versioned"; do
  [ -d "$dir" ] || { echo "setup-schema: no schema dir $dir (set TEMPORAL_SCHEMA_DIR)" >&2; exit 2; }
done

sql() {
  "$tool" --plugin postgres12 --ep "${SQL_HOST:-127.0.0.1}" -p "${SQL_PORT:-5432}" -u "${SQL_USER:-temporal}" "$@"
}

# create fails on a database that exists: that is the one failure to let pass.
create() {
  if ! out=$(sql --db "$1" create 2>&1); then
    case "$out" in
      *"already exists"*) ;;
      *) echo "$out" >&2; exit 1 ;;
    esac
  fi
}

create "$main_db"
sql --db "$main_db" setup-schema -v 0.0
sql --db "$main_db" update-schema -d "$schema/temporal/versioned"
create "$visibility_db"
sql --db "$visibility_db" setup-schema -v 0.0
sql --db "$visibility_db" update-schema -d "$schema/visibility/versioned"
echo "Temporal schema setup complete ($main_db, $visibility_db)"
