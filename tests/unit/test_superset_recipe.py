"""docs/serving.md's Superset recipe copied the package with `cp -r`: pipeline/conf, pipeline/schemas_data
and pipeline/bi_superset are links to ../conf, ../schemas and ../bi/superset, and the copy kept them as
links to folders it did not copy, dangling, so the package built from it lacked its data files.
(tests/functional/test_superset.py runs the whole recipe; this runs its copy alone.)"""

import os
import subprocess

from docs_blocks import REPOSITORY, superset_recipe


def test_the_superset_recipe_s_copy_left_dangling_links(tmp_path):
    copy = next(line for line in superset_recipe().splitlines() if line.startswith("cp "))
    subprocess.run(["bash", "-euc", f'mkdir -p "$SUPERSET_HOME/src" && {copy}'], cwd=REPOSITORY, check=True,
                   env=os.environ | {"SUPERSET_HOME": str(tmp_path)}, timeout=60)
    source = tmp_path / "src" / "pipeline"
    assert [path for path in source.rglob("*") if path.is_symlink() and not path.exists()] == []
    for data in ("conf/rules/punto_banco.yaml", "schemas_data/rounds.yaml", "bi_superset/metadata.yaml"):
        assert (source / data).is_file() and not (source / data.partition("/")[0]).is_symlink()
