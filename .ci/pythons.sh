#!/usr/bin/env bash
# The oldest and the newest supported Python (pyproject's requires-python and classifiers) run a
# fast subset of the tests: the layers, the recipe and release checks, start methods, the online
# policy, the search's choice, bursts, the CLI and the online loader (the slow tests and the
# framework integrations stay with the full suite on the main Python). A Python that is not
# installed here is named and skipped.
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
tests=(tests/test_layers.py tests/test_release.py tests/test_start_methods.py tests/test_recipe.py
       tests/test_online_policy.py tests/test_space.py tests/test_workload.py tests/test_decision.py
       tests/test_search_choose.py tests/test_burst.py tests/test_cli.py tests/test_online_loader.py)
for version in ${PYTHONS:-3.10 3.13}; do
    python=""  # pyenv's interpreters first (its shims on PATH fail for a version not selected)
    for candidate in "${PYENV_ROOT:-$HOME/.pyenv}"/versions/"$version".*/bin/python \
                     "$(command -v "python$version" || true)"; do
        if [ -x "$candidate" ] && "$candidate" -V > /dev/null 2>&1; then python=$candidate; break; fi
    done
    if [ -z "$python" ]; then
        echo "== Python $version: not installed here, skipped"
        continue
    fi
    began=$SECONDS
    "$python" -m venv "$work/$version"
    "$work/$version/bin/pip" install -q "$repo" pytest pytest-timeout
    (cd "$repo" && "$work/$version/bin/python" -m pytest -q -p no:cacheprovider -m "not slow" "${tests[@]}")
    echo "== Python $version ($("$python" -V)): fast subset passed in $((SECONDS - began)) s"
done
