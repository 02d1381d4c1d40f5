#!/bin/bash
# Create the openstack_citest user and database that oslo.db's
# opportunistic tests use on MariaDB/MySQL and PostgreSQL, so those tests
# run instead of being skipped. Safe to run again.
#
# Connects as MariaDB's root (empty password) and PostgreSQL's postgres
# superuser (trust auth) on 127.0.0.1; override with DB_ROOT_PW,
# MYSQL_HOST, PG_HOST. A server that cannot be reached is reported and
# skipped; the script fails only if a reachable server refuses the setup,
# or, with REQUIRE=1 (as .ci/run sets), if a server cannot be reached.

set -u

DB_USER=openstack_citest
DB_PW=openstack_citest
DB_ROOT_PW=${DB_ROOT_PW:-}
MYSQL_HOST=${MYSQL_HOST:-127.0.0.1}
PG_HOST=${PG_HOST:-127.0.0.1}
REQUIRE=${REQUIRE:-0}
status=0

missing() {
    echo "test-setup: $1" >&2
    if [ "$REQUIRE" = 1 ]; then status=1; fi
}

if command -v mysql >/dev/null 2>&1 && \
        mysql -h "$MYSQL_HOST" -u root ${DB_ROOT_PW:+-p"$DB_ROOT_PW"} \
        -e 'SELECT 1' >/dev/null 2>&1; then
    mysql -h "$MYSQL_HOST" -u root ${DB_ROOT_PW:+-p"$DB_ROOT_PW"} <<SQL || status=1
CREATE USER IF NOT EXISTS '$DB_USER'@'%' IDENTIFIED BY '$DB_PW';
CREATE USER IF NOT EXISTS '$DB_USER'@'localhost' IDENTIFIED BY '$DB_PW';
GRANT ALL PRIVILEGES ON *.* TO '$DB_USER'@'%' WITH GRANT OPTION;
GRANT ALL PRIVILEGES ON *.* TO '$DB_USER'@'localhost' WITH GRANT OPTION;
FLUSH PRIVILEGES;
CREATE DATABASE IF NOT EXISTS $DB_USER CHARACTER SET utf8mb4;
SQL
    echo "test-setup: MariaDB/MySQL user $DB_USER ready on $MYSQL_HOST"
else
    missing "MariaDB/MySQL not reachable on $MYSQL_HOST as root; its tests will be skipped"
fi

if command -v psql >/dev/null 2>&1 && \
        psql -h "$PG_HOST" -U postgres -d postgres -tAc 'SELECT 1' \
        >/dev/null 2>&1; then
    psql -h "$PG_HOST" -U postgres -d postgres -v ON_ERROR_STOP=1 -q <<SQL || status=1
DO \$\$
BEGIN
    IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = '$DB_USER') THEN
        CREATE ROLE $DB_USER LOGIN SUPERUSER PASSWORD '$DB_PW';
    ELSE
        ALTER ROLE $DB_USER LOGIN SUPERUSER PASSWORD '$DB_PW';
    END IF;
END
\$\$;
SQL
    if ! psql -h "$PG_HOST" -U postgres -d postgres -tAc \
            "SELECT 1 FROM pg_database WHERE datname = '$DB_USER'" \
            | grep -q 1; then
        psql -h "$PG_HOST" -U postgres -d postgres -q \
            -c "CREATE DATABASE $DB_USER OWNER $DB_USER" || status=1
    fi
    echo "test-setup: PostgreSQL role $DB_USER ready on $PG_HOST"
else
    missing "PostgreSQL not reachable on $PG_HOST as postgres; its tests will be skipped"
fi

exit $status
