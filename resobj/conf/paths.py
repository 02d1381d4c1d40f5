"""Where resobj keeps its state on the local machine."""

import os

from oslo_config import cfg

state_dir_opt = cfg.StrOpt(
    'state_dir',
    sample_default='$XDG_STATE_HOME/resobj',
    help='Directory for local state, including the embedded SQLite '
         'database used when [database] connection is not set. Defaults '
         'to $XDG_STATE_HOME/resobj, or ~/.local/state/resobj when '
         'XDG_STATE_HOME is not set, so every user gets their own.')


def register_opts(conf):
    conf.register_opt(state_dir_opt)


def list_opts():
    return [state_dir_opt]


def state_dir(conf):
    """The configured state directory, or the per-user default."""
    if conf.state_dir:
        return os.path.abspath(os.path.expanduser(conf.state_dir))
    base = os.environ.get('XDG_STATE_HOME') or os.path.join(
        os.path.expanduser('~'), '.local', 'state')
    return os.path.join(base, 'resobj')
