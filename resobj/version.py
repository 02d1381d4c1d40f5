"""The installed version of resobj, as pbr computes it from git or metadata."""

import pbr.version

version_info = pbr.version.VersionInfo('resobj')


def version_string():
    return version_info.version_string()
