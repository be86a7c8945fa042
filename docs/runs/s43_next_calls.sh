# The forty-third session's plan for the next session with device time (prepared; not run). Here, first:
#   bash cookbook/patches/ab.sh prepare mixed_chunks      # scratch/ab_main (HEAD), scratch/ab_mixed_chunks
#   mkdir -p scratch/ab_old && git archive d397809 | tar -x -C scratch/ab_old --exclude=docs \
#       && echo d397809+old > scratch/ab_old/COMMIT       # the expert packing before c84a537 (whole layers)
# then run(command="bash docs/runs/s43_next_calls.sh 1", timeout_s=600), then 2 (each on any card; 1 is the
# check that matters on an 80 GB H100).
#   1: memory at load, old and main (docs/runs/s43_mem120b.py: 120b, 8 slots; expect main's split blocks after
#      empty_cache well under old's 4.63 GiB and its KV cache well over 30,976 tokens), docs/runs/s43_next_mem.py
#      on main (graphs' and activations' memory against the 4 GiB reserve, never measured), then 120b's TTFT at
#      122,880 tokens with main (never measured; needs main's packing on an 80 GB card)
#   2: mixed_chunks (cookbook/patches/README.md): its tests, then pause:122880 (many:1024 needs an H200's memory,
#      many:512 on an H100)
set -u
R=$(pwd); OUT=${OUT:-$R/scratch/out}; mkdir -p "$OUT"
for d in scratch/ab_*/; do ln -sfn "$R/shared" "$d/shared"; cp docs/runs/s43_mem120b.py docs/runs/s43_next_mem.py "$d/"; done
lines() { tr '\r' '\n' | grep -v "it/s\|layer/s\|s/it\|s/layer\|^ *$"; }  # tqdm's bars end in \r, not \n
case "${1:-}" in
    1) for t in old main; do (cd "scratch/ab_$t" && timeout -k 5 60 python s43_mem120b.py 2>&1 | lines \
           | tail -4 | sed "s/^/$t /"); done | tee "$OUT/mem120b.txt"
       (cd scratch/ab_main && timeout -k 5 180 python s43_next_mem.py 2>&1 | lines | tail -8) \
           | tee "$OUT/mem_main_prefill.txt"
       # 8 slots, as 20b's 122,880 on the H100: 256 slots' rings cost 120b ~1.1 GiB of KV (ab.sh cannot pass that)
       (cd scratch/ab_main && timeout -k 5 270 python cookbook/bench_long.py ttft --model 120b --lengths 122880 \
           --max-slots 8 --commit "$(cat COMMIT)" --out "$OUT/ttft_120b_122880.jsonl" 2>&1 | lines | tail -3) ;;
    2) rm -rf scratch/ab_old; OUT=$OUT timeout -k 5 580 bash cookbook/patches/ab.sh run --tests "${@:2}" ;;  # pause:122880, or many:1024 on an H200
    *) echo "usage: s43_next_calls.sh 1|2"; exit 2 ;;
esac
