"""workflow/setup.sh on a login node: no pdflatex, no root, no sudo. It installs everything
but TeX and says how to get TeX (the PDF is then skipped), instead of stopping."""

import os
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

#: A python3 that "creates" the venv: .venv/bin/{activate,python}, the latter recording
#: the pip installs asked of it.
FAKE_PYTHON3 = """#!/bin/sh
[ "$1 $2" = "-m venv" ] || exit 9
mkdir -p "$3/bin"
printf 'PATH="%s/bin:$PATH"\\n' "$PWD/$3" > "$3/bin/activate"
printf '#!/bin/sh\\necho "$@" >> "%s/pip.log"\\n' "$PWD" > "$3/bin/python"
chmod +x "$3/bin/python"
"""


def _tool(bin_dir: Path, name: str, body: str) -> None:
    (bin_dir / name).write_text(body)
    (bin_dir / name).chmod(0o755)


@pytest.mark.slow  # runs the script (bash)
def test_setup_without_pdflatex_or_root_installs_all_but_tex(tmp_path):
    (tmp_path / "workflow").mkdir()
    shutil.copy(ROOT / "workflow/setup.sh", tmp_path / "workflow/setup.sh")
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    _tool(bin_dir, "python3", FAKE_PYTHON3)
    _tool(bin_dir, "id", "#!/bin/sh\necho 1000\n")  # not root
    for tool in ("bash", "sh", "mkdir", "chmod", "dirname", "printf", "cat"):
        if shutil.which(tool):
            os.symlink(shutil.which(tool), bin_dir / tool)
    out = subprocess.run(["bash", "workflow/setup.sh"], cwd=tmp_path, capture_output=True,
                         text=True, env={"PATH": str(bin_dir), "HOME": str(tmp_path)},
                         timeout=60)
    assert out.returncode == 0, out.stderr
    assert "tables.pdf will be skipped" in out.stderr
    assert "texlive" in out.stderr  # how to get TeX
    installs = (tmp_path / "pip.log").read_text().splitlines()
    assert "-m pip install --quiet torch==2.13.0" in installs
    assert "-m pip install --quiet -c workflow/constraints.txt -e .[dev]" in installs
