"""Reject configuration files that name options nobody registered.

oslo.config silently ignores unknown options, so a typo such as
``[databse] connection`` would leave resobj on its embedded SQLite
database without a word. Management commands call
:func:`check_unknown_options` after parsing to turn that into an error.
"""

import glob
import os

from oslo_config import cfg

from resobj import exception


def _registered_opts(conf):
    """Yield (group name, Opt) for every option registered on ``conf``.

    oslo.config offers no public listing of registered Opt objects:
    ``ConfigOpts`` and its groups are Mappings of option names to values,
    but the deprecated names an option is also read under live only on
    its Opt. This reads ConfigOpts' registry (``_opts`` and ``_groups``);
    ``test_registered_opts_are_the_public_names`` fails if it stops
    matching the public Mappings.
    """
    for info in conf._opts.values():
        yield 'DEFAULT', info['opt']
    for group_name, group in conf._groups.items():
        for info in group._opts.values():
            yield group_name, info['opt']


def _section_key(name):
    """The name under which oslo.config matches a file's section.

    As oslo.config does: ``DEFAULT`` exactly, any other section in any
    case (``[default]`` is not ``[DEFAULT]``: oslo.config ignores it).
    """
    return name if name == 'DEFAULT' else name.lower()


def _known_names(conf):
    """{section key: {names oslo.config reads an option under}}.

    An option is read under its ``dest`` and each deprecated name, in its
    own group or the deprecated one; file keys are matched exactly
    (``max-pool-size`` is not ``max_pool_size``).
    """
    known = {}
    for group, opt in _registered_opts(conf):
        known.setdefault(_section_key(group), set()).add(opt.dest)
        for alias in opt.deprecated_opts:
            alias_group = _section_key(alias.group or group)
            known.setdefault(alias_group, set()).add(alias.name or opt.dest)
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


def _file_sections(path):
    """{section: {key: [values]}} of one file, parsed as oslo.config does."""
    sections = {}
    try:
        cfg.ConfigParser(path, sections).parse()
    except (OSError, UnicodeDecodeError, cfg.ParseError) as exc:
        raise exception.ConfigurationError(
            reason='cannot read %s: %s' % (path, exc))
    return sections


def check_unknown_options(conf):
    """Raise UnknownConfigOption for the first unregistered option found."""
    known = _known_names(conf)
    for path in _parsed_files(conf):
        # No DEFAULT inheritance: every section is checked on its own.
        for section, keys in _file_sections(path).items():
            names = known.get(_section_key(section), ())
            for key in keys:
                if key not in names:
                    raise exception.UnknownConfigOption(
                        option='[%s] %s' % (section, key), path=path)
