"""The options every resobj command registers."""

from oslo_log import log as logging

from resobj import conf as resobj_conf
from resobj import rpc


def register_all(conf):
    """resobj's options, oslo.log's and oslo.messaging's, on ``conf``.

    One configuration file serves every service of a host: each command
    knows the messaging options in it, even one that sends no message.
    """
    resobj_conf.register_opts(conf)
    logging.register_options(conf)
    rpc.register_opts(conf)
