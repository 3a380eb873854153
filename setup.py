"""Which packages the wheel holds (the metadata is in pyproject.toml).

The repository keeps two top-level folders that install under ``graphmem``: ``api/`` becomes the
package ``graphmem.api`` and ``cypher/`` ships as the data package ``graphmem.cypher_files`` (read
with importlib.resources, see graphmem/cypher.py; its subfolders hold data only). Every package
under ``graphmem/`` and ``api/`` is found here, so a new subpackage needs no edit.
"""

from setuptools import find_namespace_packages, find_packages, setup

CYPHER_FOLDERS = find_namespace_packages("cypher", exclude=["*__pycache__*"])

setup(
    packages=[
        *find_packages(include=["graphmem", "graphmem.*"]),
        "graphmem.api",
        *(f"graphmem.api.{name}" for name in find_packages("api")),
        "graphmem.cypher_files",
        *(f"graphmem.cypher_files.{name}" for name in CYPHER_FOLDERS),
    ],
    package_dir={"graphmem.api": "api", "graphmem.cypher_files": "cypher"},
)
