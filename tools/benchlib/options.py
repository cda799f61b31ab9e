"""Command-line options the Nova-in-process benchmarks share.
"""



from nova_drs_scheduler import conf as drs_conf

CONF = drs_conf.CONF


def add_gc_argument(parser):
    parser.add_argument('--gc-collect-interval', type=float, default=None,
                        help='[drs_host_cache] gc_collect_interval for ours '
                             '(0: nothing frozen, as before that option); '
                             'its default if unset.')


def apply_gc_argument(args):
    if args.gc_collect_interval is not None:
        CONF.set_override('gc_collect_interval', args.gc_collect_interval,
                          group='drs_host_cache')


def add_db_argument(parser):
    parser.add_argument('--db', default=None,
                        help='SQLAlchemy URL of a server without database '
                             'name, e.g. mysql+pymysql://root@127.0.0.1:3307'
                             '; SQLite files in a temp dir by default.')
