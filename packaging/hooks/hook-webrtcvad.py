# The contrib hook copies the metadata of a distribution named `webrtcvad`; ours is
# `webrtcvad-wheels` (the same module, with wheels), which the module asks for its version.
from PyInstaller.utils.hooks import copy_metadata

datas = copy_metadata("webrtcvad-wheels")
