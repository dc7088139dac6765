# Sphinx configuration of vmak's documentation (`make htmldocs`).
project = 'vmak'
author = 'the vmak developers'
copyright = '2026, the vmak developers'
root_doc = 'index'
exclude_patterns = ['_build', 'netlink/specs']
html_theme = 'alabaster'
html_theme_options = {'nosidebar': False}
# Documents name files of the tree (``kmod/rx.c``); none is a Python object.
default_role = 'literal'
highlight_language = 'none'
