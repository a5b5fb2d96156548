#!/bin/sh
# seeds.sh BUILD: fills BUILD/seeds/<target>/ with the generated seed inputs of
# the fuzz harnesses: the shared Recast navmeshes (JSON and OBJ) when
# ../shared is present, and serialized meshes from BUILD/fuzz/seed_blobs.
# Hand-written seeds live in tests/fuzz/corpus/<target>/ (committed).
set -e
build=$1
seeds=$build/seeds
mkdir -p "$seeds/blob" "$seeds/mesh_build" "$seeds/obj" "$seeds/navmesh_json" "$seeds/request"
shared=../shared/meshes
objs=""
if [ -d "$shared" ]; then
    # Only meshes within fuzz-run's 32 KB input cap for this harness (see the
    # Makefile): a larger seed is truncated into junk JSON that only slows it.
    for f in "$shared"/*.navmesh.json; do
        if [ "$(wc -c < "$f")" -le 32768 ]; then cp "$f" "$seeds/navmesh_json/"; fi
    done
    for f in "$shared"/*.navmesh.obj; do cp "$f" "$seeds/obj/"; objs="$objs $f"; done
else
    echo "seeds.sh: ../shared absent: using only the committed and generated seeds"
fi
# shellcheck disable=SC2086
"$build/fuzz/seed_blobs" "$seeds" $objs
