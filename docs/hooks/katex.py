"""mkdocs hook: KaTeX's script, style sheet and fonts are served from the site itself.

The formulas (``$…$``, ``$$…$$``; ``pymdownx.arithmatex`` in generic mode) are typeset in the
browser by KaTeX (docs/javascripts/katex.js). Its files come from a package, not a CDN: Debian's
``libjs-katex`` (with ``fonts-katex``; .ci/run installs it), at ``/usr/share/javascript/katex``,
or the ``dist`` folder of npm's ``katex`` named by ``ASSOCMEM_KATEX_DIR`` on other systems. No
PyPI package ships KaTeX's style sheet and fonts. They are copied to ``assets/katex/``; a build
without them fails.
"""

import os
from pathlib import Path
from typing import Any

from mkdocs.config.defaults import MkDocsConfig
from mkdocs.exceptions import PluginError
from mkdocs.structure.files import File, Files

DEBIAN = Path("/usr/share/javascript/katex")
DEST = "assets/katex"
NEEDED = ("katex.min.js", "katex.min.css", "contrib/auto-render.js")


def katex_dir() -> Path:
    """The folder holding KaTeX's distribution files; PluginError where there is none."""
    folder = Path(os.environ.get("ASSOCMEM_KATEX_DIR") or DEBIAN)
    missing = [name for name in NEEDED if not (folder / name).is_file()]
    if missing:
        raise PluginError(
            f"KaTeX not found in {folder} (missing {', '.join(missing)}): install Debian's "
            "libjs-katex (apt-get install libjs-katex) or set ASSOCMEM_KATEX_DIR to npm "
            "katex's dist folder"
        )
    return folder


def _assets(folder: Path) -> list[str]:
    fonts = sorted(p.relative_to(folder).as_posix() for p in (folder / "fonts").glob("*.woff2"))
    return [*NEEDED, *fonts]  # every browser KaTeX supports reads woff2


def on_files(files: Files, config: MkDocsConfig, **kwargs: Any) -> Files:
    folder = katex_dir()
    for name in _assets(folder):
        files.append(File.generated(config, f"{DEST}/{name}", abs_src_path=str(folder / name)))
    return files
