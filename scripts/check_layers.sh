#!/bin/bash
# Fails when a file includes a header of a higher layer (docs/DESIGN.md):
#   src/core (0)  <-  src/reduce (1)  <-  src/transport (2)  <-  src/coll (3)  <-  src/api (4)
# A layer includes only its own headers and those of the layers below it.
# Within transport, the engine's header (xfer.h) is for the layers above:
# a transport never includes it (it calls back through nothing but wire.h).
# include/collie.h includes nothing of src/.  The tools (tools/) and the
# training workloads (train/) see the public header, their own headers and,
# for the tools, src/api/tools_api.h: nothing else of src/.
#   check_layers.sh [ROOT]     prints each violation; exit 1 if any.
set -euo pipefail
root=${1:-$(cd "$(dirname "$0")/.." && pwd)}
cd "$root"

layer_of() { # a path relative to root -> its layer number, or "" outside src/
    case $1 in
    src/core/*) echo 0 ;; src/reduce/*) echo 1 ;; src/transport/*) echo 2 ;;
    src/coll/*) echo 3 ;; src/api/*) echo 4 ;; *) echo "" ;;
    esac
}

# Where `#include "name"` from file resolves: next to the file, else include/, else src/.
resolve() {
    local dir name=$2 p
    dir=$(dirname "$1")
    for p in "$dir/$name" "include/$name" "src/$name"; do
        if [ -f "$p" ]; then
            realpath -m --relative-to=. "$p"
            return
        fi
    done
    echo "?$name"
}

bad=0
violation() { echo "layering: $1:$2: includes \"$3\" ($4)"; bad=1; }

while IFS= read -r file; do
    mine=$(layer_of "$file")
    while IFS=: read -r line inc; do
        name=$(sed -E 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"([^"]+)".*/\1/' <<<"$inc")
        target=$(resolve "$file" "$name")
        theirs=$(layer_of "$target")
        case $file in
        src/*)
            if [ -n "$theirs" ] && [ "$theirs" -gt "$mine" ]; then
                violation "$file" "$line" "$name" "$target is a higher layer"
            elif [ "$target" = src/transport/xfer.h ] && [ "$mine" = 2 ] &&
                [ "$file" != src/transport/xfer.c ]; then
                violation "$file" "$line" "$name" "a transport must not call the engine above it"
            elif [ -z "$theirs" ] && [ "$target" != include/collie.h ]; then
                violation "$file" "$line" "$name" "$target is outside the library"
            fi ;;
        include/*)
            [ "$target" = include/collie.h ] || violation "$file" "$line" "$name" "the public header is self-contained" ;;
        tools/* | train/*)
            case $target in
            include/collie.h | src/api/tools_api.h) [ "$target" != src/api/tools_api.h ] || [ "${file#tools/}" != "$file" ] ||
                violation "$file" "$line" "$name" "only tools/ may use the tools' API" ;;
            tools/* | train/*) ;;
            *) violation "$file" "$line" "$name" "tools and workloads see collie.h and src/api/tools_api.h only" ;;
            esac ;;
        esac
    done < <(grep -nE '^[[:space:]]*#[[:space:]]*include[[:space:]]*"' "$file" || true)
done < <(find src include tools train -name '*.[ch]' | sort)

if [ $bad = 0 ]; then
    echo "layering: ok ($(find src include tools train -name '*.[ch]' | wc -l) files)"
fi
exit $bad
