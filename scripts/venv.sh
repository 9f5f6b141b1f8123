# SPDX-License-Identifier: BSD-3-Clause
# Sourced by torch_env.sh and peers_env.sh: virtual environments kept outside the
# clone (~/.cache/collie), each remembering what it was made with (.collie-wants),
# reused while that is unchanged and made afresh otherwise.

# venv_current DIR WANTS: DIR was made with exactly WANTS.
venv_current() {
    [ -x "$1/bin/python" ] && [ "$(cat "$1/.collie-wants" 2>/dev/null)" = "$2" ]
}

# venv_make DIR WANTS CHECK...: a fresh DIR with WANTS (pip requirements) installed;
# it is remembered as made only once CHECK (a command) passes.
venv_make() {
    local venv=$1 wants=$2
    shift 2
    echo "collie: installing $wants into $venv (once)" >&2
    rm -rf "$venv"
    mkdir -p "$(dirname "$venv")"
    /usr/bin/python3 -m venv "$venv" >&2
    # shellcheck disable=SC2086  # one word per requirement
    "$venv/bin/pip" install -q --disable-pip-version-check $wants >&2
    "$@" >&2
    echo "$wants" > "$venv/.collie-wants"
}
