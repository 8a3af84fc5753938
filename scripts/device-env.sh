# Sourced by the device scripts (gpu-check.sh, gpu-lab.sh) from the repository's root: $OUT
# (default ./out) with log.txt teed from here on, and the wheels in .whl/ (packages the
# device's image lacks, carried with the call) installed into /tmp/site on PYTHONPATH.
export OUT="${OUT:-out}" PYTHONUNBUFFERED=1
mkdir -p "$OUT"
exec > >(tee "$OUT/log.txt") 2>&1
if [ -d .whl ]; then
    python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
        --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site
fi
