#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# Fails when a file includes a header of a higher layer (docs/DESIGN.md):
#   src/core (0)  <-  src/reduce (1)  <-  src/transport (2)  <-  src/coll (3)  <-  src/api (4)
# A layer includes only its own headers and those of the layers below it.
# Within transport, the engine's header (xfer.h) is for the layers above:
# a transport never includes it (it calls back through nothing but wire.h).
# include/collie.h includes nothing of src/.  The tools (tools/) and the
# training workloads (train/) see the public header, their own headers and,
# for the tools, src/api/tools_api.h: nothing else of src/.  Within tools/,
# tools/common <- tools/bench <- the subcommands' files.
#   check_layers.sh [ROOT]     prints each violation; exit 1 if any.
set -euo pipefail
root=${1:-$(cd "$(dirname "$0")/.." && pwd)}
cd "$root"

# One grep reads every include; the rest runs in bash itself, no process per
# include: the test runs the check seven times, in every CI suite.

# layer_of PATH: sets `layer` to PATH's layer number, or "" outside src/.
layer_of() {
    case $1 in
    src/core/*) layer=0 ;; src/reduce/*) layer=1 ;; src/transport/*) layer=2 ;;
    src/coll/*) layer=3 ;; src/api/*) layer=4 ;; *) layer="" ;;
    esac
}

# normalize PATH: sets `path` to PATH relative to root without . and .. parts.
normalize() {
    local part parts=() out=() IFS=/
    read -ra parts <<<"$1"
    for part in "${parts[@]}"; do
        case $part in
        "" | .) ;;
        ..) [ ${#out[@]} -gt 0 ] && unset 'out[${#out[@]}-1]' ;;
        *) out+=("$part") ;;
        esac
    done
    path="${out[*]}"
}

# resolve FILE NAME: sets `target` to where `#include "NAME"` from FILE
# resolves: next to the file, else include/, else src/; "?NAME" if nowhere.
resolve() {
    local p
    for p in "${1%/*}/$2" "include/$2" "src/$2"; do
        if [ -f "$p" ]; then
            normalize "$p"
            target=$path
            return
        fi
    done
    target="?$2"
}

bad=0
violation() { echo "layering: $1:$2: includes \"$3\" ($4)"; bad=1; }

# The tools' folders point one way too: tools/common (launching, plots) <-
# tools/bench <- the subcommands in tools/.  tools_folder FILE LINE NAME TARGET
tools_folder() {
    case $1:$4 in
    tools/common/*:tools/common/* | tools/bench/*:tools/common/* | tools/bench/*:tools/bench/*) ;;
    tools/common/*:tools/* | tools/bench/*:tools/*)
        violation "$1" "$2" "$3" "$4 is a tools folder above this one" ;;
    esac
}

include_re='^[[:space:]]*#[[:space:]]*include[[:space:]]*"([^"]+)"'
while IFS=: read -r file line inc; do
    [[ $inc =~ $include_re ]] || continue
    name=${BASH_REMATCH[1]}
    layer_of "$file"
    mine=$layer
    resolve "$file" "$name"
    layer_of "$target"
    theirs=$layer
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
        tools/* | train/*) tools_folder "$file" "$line" "$name" "$target" ;;
        *) violation "$file" "$line" "$name" "tools and workloads see collie.h and src/api/tools_api.h only" ;;
        esac ;;
    esac
done < <(find src include tools train -name '*.[ch]' -print0 | sort -z |
    xargs -0 grep -nHE '^[[:space:]]*#[[:space:]]*include[[:space:]]*"' || true)

if [ $bad = 0 ]; then
    echo "layering: ok ($(find src include tools train -name '*.[ch]' | wc -l) files)"
fi
exit $bad
