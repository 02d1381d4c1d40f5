# Sphinx configuration for the standalone resobj release notes.
#
# The same notes are also part of the main documentation
# (doc/source/releasenotes.rst). To build only the notes, from the top of
# the repository:
#
#     sphinx-build -W -b html releasenotes/source releasenotes/build/html

import os
import sys

project = 'resobj release notes'
copyright = 'resobj developers'
author = 'resobj developers'

# reno_merges: see its docstring (a reno scanner bug with merges).
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                '../../doc/source/_ext'))

extensions = [
    'reno_merges',
    'reno.sphinxext',
]

root_doc = 'index'
source_suffix = {'.rst': 'restructuredtext'}
exclude_patterns = []
highlight_language = 'none'

html_theme = 'alabaster'
html_static_path = []
