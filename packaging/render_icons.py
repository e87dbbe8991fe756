"""Render the app icon (assets/*.svg) to the PNG sizes desktops look for: 48, 64, 128, 256 px.

Usage: python packaging/render_icons.py OUT_DIR  -> OUT_DIR/hicolor/<N>x<N>/apps/<id>.png and
OUT_DIR/hicolor/scalable/apps/<id>.svg. Uses Qt's SVG renderer (PySide6 Essentials) offscreen.
"""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

ICON_ID = "io.github.talkllama.TalkLlama"
SIZES = (48, 64, 128, 256)
SVG = Path(__file__).resolve().parents[1] / "assets" / f"{ICON_ID}.svg"


def main(out: Path) -> None:
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    from PySide6.QtCore import Qt
    from PySide6.QtGui import QGuiApplication, QImage, QPainter
    from PySide6.QtSvg import QSvgRenderer

    _app = QGuiApplication([])
    renderer = QSvgRenderer(str(SVG))
    if not renderer.isValid():
        raise SystemExit(f"cannot read {SVG}")
    scalable = out / "hicolor" / "scalable" / "apps"
    scalable.mkdir(parents=True, exist_ok=True)
    shutil.copy(SVG, scalable / SVG.name)
    for size in SIZES:
        image = QImage(size, size, QImage.Format.Format_ARGB32)
        image.fill(Qt.GlobalColor.transparent)
        painter = QPainter(image)
        renderer.render(painter)
        painter.end()
        folder = out / "hicolor" / f"{size}x{size}" / "apps"
        folder.mkdir(parents=True, exist_ok=True)
        if not image.save(str(folder / f"{ICON_ID}.png")):
            raise SystemExit(f"cannot write {folder}")


if __name__ == "__main__":
    main(Path(sys.argv[1]))
