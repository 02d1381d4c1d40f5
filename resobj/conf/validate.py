"""Reject configuration files that name options nobody registered.

oslo.config silently ignores unknown options, so a typo such as
``[databse] connection`` would leave resobj on its embedded SQLite
database without a word. Management commands call
:func:`check_unknown_options` after parsing to turn that into an error.
"""

import configparser
import glob
import os

from oslo_config import cfg

from resobj import exception


def _registered_opts(conf):
    """Yield (group name, Opt) for every option registered on ``conf``.

    oslo.config has no public listing of registered Opt objects, so this
    reads ConfigOpts' registry (``_opts`` and ``_groups``), which has kept
    its shape since oslo.config 1.x.
    """
    for info in conf._opts.values():
        yield 'DEFAULT', info['opt']
    for group_name, group in conf._groups.items():
        for info in group._opts.values():
            yield group_name, info['opt']


def _known_names(conf):
    """{lower-case group: {option names, deprecated aliases included}}."""
    known = {}
    for group, opt in _registered_opts(conf):
        known.setdefault(group.lower(), set()).add(opt.dest)
        for alias in opt.deprecated_opts:
            alias_group = (alias.group or group).lower()
            known.setdefault(alias_group, set()).add(
                (alias.name or opt.dest).replace('-', '_'))
    return known


def check_values(conf):
    """Read every registered option once, so a bad value fails now.

    oslo.config converts values when they are first read; without this a
    typo in an option that a command reads late (or never) goes unnoticed.
    Raises ConfigurationError naming the option.
    """
    for group, opt in _registered_opts(conf):
        try:
            if group == 'DEFAULT':
                getattr(conf, opt.dest)
            else:
                getattr(conf[group], opt.dest)
        except cfg.Error as exc:
            raise exception.ConfigurationError(
                reason='[%s] %s: %s' % (group, opt.dest, _reason(exc)))


def _reason(exc):
    # ConfigFileValueError's text embeds a LocationInfo repr; the part
    # after "is not valid:" is what the user needs.
    text = str(exc)
    return text.split('is not valid: ', 1)[-1]


def _parsed_files(conf):
    """The files oslo.config read: config files, then each dir's *.conf.

    Both options hold the defaults oslo.config searched when none were
    given on the command line.
    """
    files = list(conf.config_file or [])
    for directory in conf.config_dir or []:
        directory = os.path.expanduser(directory)
        files.extend(sorted(glob.glob(os.path.join(directory, '*.conf'))))
    return files


def check_unknown_options(conf):
    """Raise UnknownConfigOption for the first unregistered option found."""
    known = _known_names(conf)
    for path in _parsed_files(conf):
        # No DEFAULT inheritance: every section is checked on its own.
        parser = configparser.RawConfigParser(
            strict=False, default_section='\0none')
        parser.optionxform = str
        try:
            with open(path, encoding='utf-8') as f:
                parser.read_file(f, source=path)
        except (OSError, configparser.Error) as exc:
            raise exception.ConfigurationError(
                reason='cannot read %s: %s' % (path, exc))
        for section in parser.sections():
            names = known.get(section.lower(), ())
            for key in parser[section]:
                if key.replace('-', '_') not in names:
                    raise exception.UnknownConfigOption(
                        option='[%s] %s' % (section, key), path=path)
