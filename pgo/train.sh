#!/bin/sh
# Regenerates pgo/reclaimsim.profdata, the profile `cargo build --release` compiles the
# workspace's crates with (pgo/README.md): an instrumented build runs every shipped
# scenario and sweep, the scale benchmarks cut short and the cache simulator, and
# llvm-profdata merges what they counted. Run it after changing hot code, then commit
# the profile with the change. About 4 minutes on 2 cores, 7 when the instrumented
# build is not there yet.
set -eu

# The whole script is one function, read before any of it runs: a shell reads a
# script as it goes, so an edit to this file during a training would run torn lines.
main() {
    cd "$(dirname "$0")/.."
    [ -x "$(command -v cargo)" ] || . "$HOME/.cargo/env"

    rustup component add llvm-tools >/dev/null
    sysroot=$(rustc --print sysroot)
    host=$(rustc -vV | sed -n 's/^host: //p')
    profdata="$sysroot/lib/rustlib/$host/bin/llvm-profdata"

    work=target/pgo-train
    # The instrumented build stays in $work/build for the next training.
    rm -rf "$work/raw" "$work/out"
    mkdir -p "$work/raw"
    raw="$(pwd)/$work/raw"
    # RUSTFLAGS replaces the config's flags; the wrapper sees profile-generate and leaves
    # the old profile out.
    RUSTFLAGS="-Cprofile-generate=$raw" cargo build --release --target-dir "$work/build" --bin reclaimsim
    bin="$work/build/release/reclaimsim"

    echo "training: shipped sweeps and scenarios, scale benchmarks, cache simulator"
    for s in scenarios/*.toml; do
        name=$(basename "$s" .toml)
        if grep -q '^\[sweep\]' "$s"; then
            "$bin" sweep "$s" --out "$work/out/$name" -q --yes
        else
            "$bin" run "$s" --out "$work/out/$name" -q
        fi
    done
    "$bin" run benches/scale/big64.toml --set 'run.duration="10s"' --out "$work/out/big64" -q
    "$bin" run benches/scale/cg100.toml --set 'run.duration="8s"' --out "$work/out/cg100" -q
    "$bin" cache scenarios/traces/kv.oracleGeneral.zst --policy lru,fifo,clock,sieve,s3fifo,arc \
        --size 0.01,0.1 --output "$work/out/cache.txt"

    "$profdata" merge --sparse -o pgo/reclaimsim.profdata "$raw"/*.profraw
    rustc -vV | sed -n 's/^LLVM version: \([0-9]*\).*/\1/p' >pgo/llvm-major
    rm -rf "$work/raw" "$work/out"
    echo "wrote pgo/reclaimsim.profdata ($(wc -c <pgo/reclaimsim.profdata) bytes)"
}

main "$@"
