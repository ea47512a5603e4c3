#!/usr/bin/env bash
# Self-check of the lab mirror with the real apt, isolated from the host's apt
# configuration (own sources, preferences, keyrings, lists, cache and an empty
# dpkg status; nothing under /etc/apt or /var/lib/apt is read for sources or
# written). Builds the mirror if needed and starts the server if it is not
# running (and stops it again in that case).
#
#   LAB_DIR, LAB_MIRROR_PORT, LAB_ROCM_LINES, LAB_AMDGPU_LINES as for build.sh/serve.sh
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$HERE/../../.." && pwd)
export LAB_DIR=${LAB_DIR:-$REPO/.cache/lab}
PORT=${LAB_MIRROR_PORT:-8765}
URL=http://127.0.0.1:$PORT
LAB_ROCM_LINES=${LAB_ROCM_LINES:-"6.4:jammy,noble 6.0:jammy 7.0:jammy,noble 7.1:jammy,noble"}
LAB_AMDGPU_LINES=${LAB_AMDGPU_LINES:-"6.4:jammy,noble 6.0:jammy 30.10:jammy,noble 30.20:jammy,noble"}
STANDIN="radeonlab lab stand-in, not AMD software"
# which amdgpu line goes with a ROCm line (decoupled from 7.0 on)
declare -A AMDGPU_FOR=([6.0]=6.0 [6.4]=6.4 [7.0]=30.10 [7.1]=30.20)
declare -A SUITE_REL=([focal]=20.04 [jammy]=22.04 [noble]=24.04)

FAILS=0 CHECKS=0
ok() { CHECKS=$((CHECKS + 1)); printf '  ok   %s\n' "$*"; }
bad() { CHECKS=$((CHECKS + 1)); FAILS=$((FAILS + 1)); printf '  FAIL %s\n' "$*"; }
check() { local msg=$1; shift; if "$@"; then ok "$msg"; else bad "$msg"; fi; }

"$HERE/build.sh"
STARTED=0
if ! LAB_MIRROR_PORT=$PORT "$HERE/serve.sh" status >/dev/null; then
    LAB_MIRROR_PORT=$PORT "$HERE/serve.sh" start
    STARTED=1
fi
T=$(mktemp -d)
chmod 755 "$T" # apt's _apt sandbox user must reach lists/partial
cleanup() {
    rm -rf "$T"
    if [[ $STARTED == 1 ]]; then LAB_MIRROR_PORT=$PORT "$HERE/serve.sh" stop; fi
}
trap cleanup EXIT
LOG_START=$(wc -l < "$LAB_DIR/mirror-access.log")

echo "== key"
export GNUPGHOME=$T/gnupg
mkdir -m 700 "$GNUPGHOME"
FPR=$(cat "$LAB_DIR/rocm/rocm.gpg.fingerprint")
check "fingerprint file holds 40 hex digits ($FPR)" test "$(printf '%s' "$FPR" | grep -cE '^[0-9A-F]{40}$')" = 1
curl_get() { python3 -c 'import sys,urllib.request; sys.stdout.buffer.write(urllib.request.urlopen(sys.argv[1]).read())' "$1"; }
curl_get "$URL/rocm/rocm.gpg.key" > "$T/rocm.gpg.key"
check "served key is ASCII-armored" grep -q -- '-----BEGIN PGP PUBLIC KEY BLOCK-----' "$T/rocm.gpg.key"
SERVED_FPR=$(gpg --batch --quiet --with-colons --show-keys "$T/rocm.gpg.key" | awk -F: '/^fpr:/ && !n++ { print $10 }')
check "served key's fingerprint matches rocm.gpg.fingerprint" test "$SERVED_FPR" = "$FPR"
gpg --batch --quiet --dearmor < "$T/rocm.gpg.key" > "$T/rocm.gpg"
check "private key directory is not served" \
    test "$(python3 -c 'import sys,urllib.request,urllib.error
try: urllib.request.urlopen(sys.argv[1]); print(200)
except urllib.error.HTTPError as e: print(e.code)' "$URL/.private/gnupg/pubring.kbx")" = 404

echo "== signatures of every suite (gpgv, and a tampered Release must fail)"
while IFS= read -r rel; do
    d=$(dirname "$rel")
    short=${d#"$LAB_DIR"/}
    check "$short: InRelease verifies" gpgv --quiet --keyring "$T/rocm.gpg" "$d/InRelease" 2>/dev/null
    check "$short: Release.gpg verifies" gpgv --quiet --keyring "$T/rocm.gpg" "$d/Release.gpg" "$d/Release" 2>/dev/null
    check "$short: Origin/Label repo.radeon.com" \
        grep -qx 'Origin: repo.radeon.com' "$d/Release"
    sed 's/^Suite: /Suite: x/' "$d/Release" > "$T/Release.tampered"
    check "$short: tampered Release is rejected" bash -c "! gpgv --quiet --keyring '$T/rocm.gpg' '$d/Release.gpg' '$T/Release.tampered' 2>/dev/null"
    n_pkgs=$(grep -c '^Package:' "$d/main/binary-amd64/Packages")
    n_standin=$(grep -c "^Description: $STANDIN" "$d/main/binary-amd64/Packages")
    check "$short: all $n_pkgs packages are labelled stand-ins" test "$n_pkgs" -gt 0 -a "$n_pkgs" = "$n_standin"
done < <(find "$LAB_DIR/rocm" "$LAB_DIR/amdgpu" -name Release -path '*/dists/*' | sort)

# ---------------------------------------------------------------- isolated apt
new_apt_root() { # fresh isolated apt state under $T/apt
    rm -rf "$T/apt"
    mkdir -p "$T/apt/etc/sources.list.d" "$T/apt/etc/preferences.d" "$T/apt/etc/trusted.gpg.d" \
        "$T/apt/state/lists/partial" "$T/apt/cache/archives/partial" "$T/apt/log"
    : > "$T/apt/state/status"
    : > "$T/apt/etc/sources.list"
    printf 'Package: *\nPin: release o=repo.radeon.com\nPin-Priority: 600\n' > "$T/apt/etc/preferences.d/rocm-pin-600"
    chmod -R a+rX "$T/apt"
}
apt_iso() {
    local cmd=$1; shift
    "$cmd" -q \
        -o Dir::Etc="$T/apt/etc" \
        -o Dir::Etc::sourcelist="$T/apt/etc/sources.list" \
        -o Dir::Etc::sourceparts="$T/apt/etc/sources.list.d" \
        -o Dir::Etc::preferences="$T/apt/etc/preferences" \
        -o Dir::Etc::preferencesparts="$T/apt/etc/preferences.d" \
        -o Dir::Etc::trusted="$T/apt/etc/trusted.gpg" \
        -o Dir::Etc::trustedparts="$T/apt/etc/trusted.gpg.d" \
        -o Dir::State="$T/apt/state" \
        -o Dir::State::status="$T/apt/state/status" \
        -o Dir::Cache="$T/apt/cache" \
        -o Dir::Log="$T/apt/log" \
        -o Debug::NoLocking=1 \
        -o APT::Architecture=amd64 -o APT::Architectures::=amd64 \
        -o Acquire::Languages=none \
        -o Acquire::http::Proxy::127.0.0.1=DIRECT \
        "$@"
}
deb822() { # file uri suite
    cat > "$1" <<EOF
Types: deb
URIs: $2
Suites: $3
Components: main
Architectures: amd64
Signed-By: $T/rocm.gpg
EOF
}

has_suite() { # "<lines spec>" line suite
    local item
    for item in $1; do
        [[ ${item%%:*} == "$2" && ,${item#*:}, == *,"$3",* ]] && return 0
    done
    return 1
}

for item in $LAB_ROCM_LINES; do
    line=${item%%:*}
    for suite in $(tr ',' ' ' <<< "${item#*:}"); do
        rel=${SUITE_REL[$suite]}
        ag=${AMDGPU_FOR[$line]:-}
        echo "== apt: rocm/apt/$line $suite${ag:+ + amdgpu/$ag/ubuntu $suite} (signed-by, pin 600)"
        new_apt_root
        deb822 "$T/apt/etc/sources.list.d/rocm.sources" "$URL/rocm/apt/$line" "$suite"
        if [[ -n $ag ]] && has_suite "$LAB_AMDGPU_LINES" "$ag" "$suite"; then
            deb822 "$T/apt/etc/sources.list.d/amdgpu.sources" "$URL/amdgpu/$ag/ubuntu" "$suite"
        else
            ag=
        fi
        if apt_iso apt-get update > "$T/update.log" 2>&1; then ok "apt-get update"; else bad "apt-get update"; fi
        if grep -E '^(W|E|Err):' "$T/update.log"; then bad "apt-get update is free of warnings/errors"; else
            ok "apt-get update is free of warnings/errors"; fi
        apt_iso apt-cache policy rocm > "$T/policy" 2>&1 || true
        full=$(awk -v l="$line" 'BEGIN { split(l, a, "."); printf "%s.%s.0", a[1], a[2] }')
        cand=$(awk '/Candidate:/ { print $2 }' "$T/policy")
        check "apt-cache policy rocm: candidate $cand" bash -c "[[ '$cand' == $full.*~$rel ]]"
        check "candidate comes from the lab with priority 600 (o=repo.radeon.com pin)" \
            grep -qE "^ +600 $URL/rocm/apt/$line $suite/main amd64 Packages" "$T/policy"
        pkgs=(rocm rocm-dev rocm-hip-runtime rocm-hip-sdk rocm-smi-lib rocminfo)
        [[ -n $ag ]] && pkgs+=(amdgpu-dkms)
        if apt_iso apt-get -s install "${pkgs[@]}" > "$T/sim.log" 2>&1; then
            ok "apt-get -s install ${pkgs[*]} resolves ($(grep -c '^Inst ' "$T/sim.log") packages)"
        else
            bad "apt-get -s install ${pkgs[*]}"; sed 's/^/       /' "$T/sim.log" | tail -15
        fi
    done
done

echo "== apt-get download rocminfo (6.4 jammy) + dpkg-deb -x + run it"
new_apt_root
deb822 "$T/apt/etc/sources.list.d/rocm.sources" "$URL/rocm/apt/6.4" jammy
deb822 "$T/apt/etc/sources.list.d/amdgpu.sources" "$URL/amdgpu/6.4/ubuntu" jammy
apt_iso apt-get update > "$T/update.log" 2>&1
mkdir -p "$T/dl" "$T/root"
chmod 777 "$T/dl"
if (cd "$T/dl" && apt_iso apt-get download rocminfo rocm-core amdgpu-dkms > "$T/dl.log" 2>&1); then
    ok "apt-get download rocminfo rocm-core amdgpu-dkms"
else
    bad "apt-get download"; cat "$T/dl.log"
fi
for f in "$T"/dl/*.deb; do dpkg-deb -x "$f" "$T/root"; done
R=$T/root/opt/rocm-6.4.0
check "rocm-core ships /opt/rocm -> rocm-6.4.0" test "$(readlink "$T/root/opt/rocm")" = rocm-6.4.0
check "rocm-core ships .info/version 6.4.0-47" test "$(cat "$R/.info/version")" = 6.4.0-47
check "rocm-core ships lib and lib64" test -d "$R/lib" -a -d "$R/lib64"
check "amdgpu-dkms ships /usr/src/amdgpu-6.12.12-2147987.22.04/dkms.conf" \
    test -f "$T/root/usr/src/amdgpu-6.12.12-2147987.22.04/dkms.conf"
CONF=$T/rocminfo-capture
run_rocminfo() { RADEONLAB_LAB_ROCMINFO_CAPTURE_FILE=$CONF "$T/root/opt/rocm/bin/rocminfo" > "$T/out" 2> "$T/err"; }

rm -f "$CONF"
rc=0; run_rocminfo || rc=$?
check "no capture configured: ROCk NOT loaded banner, exit 1 (got $rc)" \
    test "$rc" = 1 -a "$(cat "$T/out")" = "ROCk module is NOT loaded, possibly no GPU devices"
# expected exit codes are the SOURCES.md table's column
while IFS='|' read -r _ file _ want _; do
    file=$(tr -d ' `' <<< "$file"); want=$(tr -d ' ' <<< "$want")
    [[ $file == *.txt ]] || continue
    echo "$file" > "$CONF"
    rc=0; run_rocminfo || rc=$?
    check "capture $file printed verbatim, exit $want (got $rc)" \
        bash -c "cmp -s '$T/out' '$REPO/tests/lab/captures/$file' && [[ $rc == $want ]]"
done < "$REPO/tests/lab/captures/SOURCES.md"
echo "16_rx6800xt_gfx1030_plus_igpu_gfx1036_rocm56.txt" > "$CONF"
check "rocm_agent_enumerator lists gfx000 gfx1030 gfx1036" \
    test "$(RADEONLAB_LAB_ROCMINFO_CAPTURE_FILE=$CONF "$R/bin/rocm_agent_enumerator" | tr '\n' ' ')" = "gfx000 gfx1030 gfx1036 "
echo "../../etc/passwd" > "$CONF"
rc=0; run_rocminfo || rc=$?
check "a capture name with a path is refused (exit 2, got $rc)" test "$rc" = 2

echo "== the 6.4 -> 30.10 firmware epoch trap is reproduced (what rocm_driver must handle)"
if has_suite "$LAB_AMDGPU_LINES" 30.10 jammy && has_suite "$LAB_AMDGPU_LINES" 6.4 jammy; then
    new_apt_root
    cat > "$T/apt/state/status" <<EOF
Package: amdgpu-dkms-firmware
Status: install ok installed
Priority: optional
Section: devel
Maintainer: x
Architecture: all
Version: 1:6.12.12.60400-2147987.22.04
Description: installed from the 6.4 line

EOF
    deb822 "$T/apt/etc/sources.list.d/amdgpu.sources" "$URL/amdgpu/30.10/ubuntu" jammy
    apt_iso apt-get update > "$T/update.log" 2>&1
    apt_iso apt-cache policy amdgpu-dkms-firmware > "$T/policy" 2>&1
    check "installed epoch-1 firmware stays the candidate over 30.10's at pin 600" \
        grep -q 'Candidate: 1:6.12.12.60400-2147987.22.04' "$T/policy"
    apt_iso apt-get -s install amdgpu-dkms > "$T/sim.log" 2>&1 || true
    check "installing 30.10 amdgpu-dkms leaves the old firmware in place" \
        bash -c "grep -q '^Inst amdgpu-dkms ' '$T/sim.log' && ! grep -q '^Inst amdgpu-dkms-firmware' '$T/sim.log'"
else
    echo "  (skipped: needs amdgpu 6.4 and 30.10 jammy)"
fi

echo "== access log"
new=$(tail -n +"$((LOG_START + 1))" "$LAB_DIR/mirror-access.log")
check "access log recorded this run's requests ($(wc -l <<< "$new") lines)" test -n "$new"
check "access log shows the rocminfo .deb download" \
    grep -qE ' GET /rocm/apt/6.4/pool/main/r/rocminfo/rocminfo_[^ ]+_amd64.deb 200 [1-9]' <<< "$new"

echo "== $CHECKS checks, $FAILS failed"
[[ $FAILS == 0 ]]
