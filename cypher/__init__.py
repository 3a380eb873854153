"""The named Cypher files (data only), installed as the package ``graphmem.cypher_files``.

Read them through ``graphmem.cypher`` (importlib.resources), never by path.
"""
