#!/bin/sh
# Remove what install.sh installed, exactly: the files and folders listed in .installed next to
# this script (folders only when empty, deepest first). Conversations, settings and models in
# your data folders (~/.config, ~/.local/share/talk-llama) are kept; the last line says where.
set -eu
app=$(cd "$(dirname "$(readlink -f "$0")")" && pwd)
manifest=$app/.installed
quiet=${1:-}
if [ ! -f "$manifest" ]; then
  echo "uninstall.sh: $manifest not found: this copy was not installed by install.sh" >&2
  exit 1
fi
list=$(mktemp)
trap 'rm -f "$list"' EXIT
cp "$manifest" "$list"
# files first
grep '^f ' "$list" | cut -c3- | while IFS= read -r path; do rm -f "$path"; done
# then folders, deepest first; the program's own folder goes whole
grep '^d ' "$list" | cut -c3- | awk '{ print length, $0 }' | sort -rn | cut -d' ' -f2- |
  while IFS= read -r dir; do
    if [ "$dir" = "$app" ]; then rm -rf "$dir"; else rmdir "$dir" 2>/dev/null || true; fi
  done
if [ "$quiet" != "--quiet" ]; then
  echo "talk-llama removed. Your conversations, settings and models are kept in ~/.config/talk-llama and ~/.local/share/talk-llama (delete those folders to remove them too)."
fi
