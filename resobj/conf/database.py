"""Database options: oslo.db's ``[database]`` group plus resobj's own."""

from oslo_config import cfg
from oslo_db import options as db_options

resobj_database_opts = [
    cfg.IntOpt(
        'connect_timeout',
        default=5,
        min=1,
        help='Seconds a new connection to a PostgreSQL or MariaDB/MySQL '
             'server may take (the driver\'s connect_timeout) before the '
             'attempt fails and the request gets 503. Also how long a '
             'cancelled statement may take to come back, see '
             'statement_timeout. A connect_timeout in the connection URL '
             'wins.'),
    cfg.IntOpt(
        'statement_timeout',
        default=30,
        min=0,
        help='Seconds the server may spend on one statement before it '
             'cancels it (PostgreSQL statement_timeout, MariaDB '
             'max_statement_time, MySQL max_execution_time for reads); '
             'the request gets 503. resobj also gives up on a server '
             'that sends nothing for statement_timeout + connect_timeout '
             'seconds (a stalled server or network link): it closes the '
             'connection, and the request gets 503. 0: no limit, as '
             'resobj-manage uses by default so that long migrations '
             'finish.'),
    cfg.IntOpt(
        'sqlite_busy_timeout',
        default=30,
        min=0,
        help='Seconds an embedded SQLite connection waits for another '
             'writer to finish before failing with "database is locked". '
             'Only used with sqlite:// connection URLs.'),
    cfg.StrOpt(
        'postgresql_plan_cache_mode',
        default='force_generic_plan',
        choices=[
            ('force_generic_plan',
             'plan each prepared statement once per connection'),
            ('auto', "PostgreSQL's default: plan again for each call's "
                     'values until a plan for any values looks no worse'),
            ('force_custom_plan', "plan every call for its values"),
            ('server', 'set nothing: keep the server\'s setting')],
        help='plan_cache_mode that resobj sets on each of its PostgreSQL '
             'connections made with the psycopg (3) driver, which '
             'prepares the statements a connection runs again and again '
             '(psycopg2 prepares nothing, and its connections keep the '
             "server's setting). resobj's statements are built per "
             'request shape so that their plans need no values.'),
    cfg.IntOpt(
        'postgresql_prepare_threshold',
        default=1,
        min=-1,
        help='How many times a psycopg (3) connection runs a statement '
             'before it prepares it on the server: 0 prepares every '
             "statement on its first run, 1 on its second; psycopg's own "
             'default is 5. -1 prepares nothing (for a connection pooler '
             'that cannot keep prepared statements, such as PgBouncer '
             'in transaction mode before 1.21). The allocation '
             "candidate search's statements are prepared on their first "
             'run unless this is -1. Ignored by psycopg2, which prepares '
             'nothing.'),
]


def register_opts(conf):
    # oslo.db's own [database] options: connection, slave_connection (the
    # read replica), pool sizes, retries and so on.
    # pool_timeout: how long a request waits for a pooled connection
    # when all are in use, before it gets 503 (SQLAlchemy's default 30
    # would hold a request thread that long).
    db_options.set_defaults(conf, pool_timeout=10)
    conf.register_opts(resobj_database_opts, group='database')


def list_opts():
    # oslo.db's options come from its own 'oslo.db' namespace in the sample
    # config generator, so only resobj's additions are listed here.
    return resobj_database_opts
