#!/bin/sh
# Install this talk-llama bundle for the current user (no root): the program into
# $PREFIX/lib/talk-llama, the command $PREFIX/bin/talk-llama, the menu entry, the AppStream
# metainfo and the icons under $PREFIX/share. PREFIX defaults to ~/.local.
# Every file and folder it creates is listed in $PREFIX/lib/talk-llama/.installed, which
# uninstall.sh reads to remove exactly those. Installing again replaces the previous install.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
PREFIX=${PREFIX:-$HOME/.local}
app=$PREFIX/lib/talk-llama
id=io.github.talkllama.TalkLlama

previous=$app/.installed  # an earlier install of ours: its files may be replaced
nl='
'
targets="$PREFIX/bin/talk-llama$nl$PREFIX/share/applications/$id.desktop$nl$PREFIX/share/metainfo/$id.metainfo.xml"
for icon in "$here"/share/icons/hicolor/*/apps/*; do
  targets="$targets$nl$PREFIX/share/${icon#"$here/share/"}"
done

# Check every target before writing anything: never overwrite a file that is not ours
# (uninstalling would then remove it).
if { [ -e "$app" ] || [ -L "$app" ]; } && [ ! -f "$previous" ]; then
  echo "install.sh: $app already exists and is not from talk-llama's installer; move it away or set PREFIX." >&2
  exit 1
fi
old_ifs=$IFS
IFS=$nl
for path in $targets; do
  if { [ -e "$path" ] || [ -L "$path" ]; } && ! { [ -f "$previous" ] && grep -qxF "f $path" "$previous"; }; then
    echo "install.sh: $path already exists and is not from talk-llama; move it away or set PREFIX." >&2
    exit 1
  fi
done
IFS=$old_ifs
if [ -f "$previous" ]; then
  "$app/uninstall.sh" --quiet
fi
manifest=$(mktemp)
trap 'rm -f "$manifest"' EXIT

# mkdir -p that lists each folder it creates (parents first)
make_dir() {
  case "$1" in /*) ;; *) echo "install.sh: not an absolute path: $1" >&2; exit 1 ;; esac
  [ -d "$1" ] && return 0
  make_dir "$(dirname "$1")"
  mkdir "$1"
  echo "d $1" >>"$manifest"
}
put() {  # put SOURCE DEST MODE
  make_dir "$(dirname "$2")"
  cp "$1" "$2"
  chmod "$3" "$2"
  echo "f $2" >>"$manifest"
}

make_dir "$(dirname "$app")"
cp -a "$here" "$app"  # symlinks inside the bundle stay symlinks
echo "d $app" >>"$manifest"

make_dir "$PREFIX/bin"
ln -s "$app/talk-llama" "$PREFIX/bin/talk-llama"
echo "f $PREFIX/bin/talk-llama" >>"$manifest"

desktop=$(mktemp)
sed "s|^Exec=talk-llama|Exec=$app/talk-llama|" "$here/share/applications/$id.desktop" >"$desktop"
put "$desktop" "$PREFIX/share/applications/$id.desktop" 644
rm -f "$desktop"
put "$here/share/metainfo/$id.metainfo.xml" "$PREFIX/share/metainfo/$id.metainfo.xml" 644
for icon in "$here"/share/icons/hicolor/*/apps/*; do
  rel=${icon#"$here/share/"}
  put "$icon" "$PREFIX/share/$rel" 644
done

cp "$manifest" "$app/.installed"
echo "talk-llama installed in $app"
echo "  command: $PREFIX/bin/talk-llama   menu entry: talk-llama   remove with: $app/uninstall.sh"
case ":$PATH:" in *":$PREFIX/bin:"*) ;; *) echo "  note: $PREFIX/bin is not on your PATH" ;; esac
echo "  first start: the window offers to download the models (about 120 MB), or run: talk-llama models fetch"
