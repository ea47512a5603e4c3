#!/usr/bin/env bash
# Build the lab's stand-in for repo.radeon.com: a signed local apt repository
# holding STAND-IN packages (named like AMD's, containing no AMD software).
# Test infrastructure only -- nothing here ships in a role. See tests/lab/README.md.
#
#   LAB_DIR            output directory (default: <repo>/.cache/lab)
#   LAB_ROCM_LINES     "<line>:<suite>,<suite> ..."  rocm/apt/<line> repositories
#                      (default "6.4:jammy,noble 6.0:jammy 7.0:jammy,noble 7.1:jammy,noble")
#   LAB_AMDGPU_LINES   same for amdgpu/<line>/ubuntu
#                      (default "6.4:jammy,noble 6.0:jammy 30.10:jammy,noble 30.20:jammy,noble")
#   LAB_FORCE=1        rebuild even when the inputs did not change
#
# Content-keyed: the inputs (this script, the stand-in scripts, the captures and
# the two line lists) are hashed; when the hash matches the last successful
# build and its outputs exist, nothing is done. The throwaway signing key is
# generated once per LAB_DIR and kept (LAB_DIR/.private/gnupg); delete LAB_DIR to
# get a new one.
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$HERE/../../.." && pwd)
LAB_DIR=${LAB_DIR:-$REPO/.cache/lab}
LAB_ROCM_LINES=${LAB_ROCM_LINES:-"6.4:jammy,noble 6.0:jammy 7.0:jammy,noble 7.1:jammy,noble"}
LAB_AMDGPU_LINES=${LAB_AMDGPU_LINES:-"6.4:jammy,noble 6.0:jammy 30.10:jammy,noble 30.20:jammy,noble"}
LAB_FORCE=${LAB_FORCE:-0}
CAPTURES_SRC=$REPO/tests/lab/captures
STANDINS=$HERE/standins

STANDIN_LINE="radeonlab lab stand-in, not AMD software"
MAINTAINER="radeonlab lab <lab@radeonlab.invalid>"
KEY_UID="radeonlab lab throwaway repo signing key (NOT AMD, tests only) <lab@radeonlab.invalid>"

say() { printf 'lab-mirror: %s\n' "$*"; }
die() { printf 'lab-mirror: ERROR: %s\n' "$*" >&2; exit 1; }

# ---------------------------------------------------------------- version data
# Shapes follow the real repositories (rocm_facts.md §1); the numbers are
# plausible, not copied from AMD's indexes.
declare -A ROCM_FULL=([6.0]=6.0.0 [6.4]=6.4.0 [7.0]=7.0.0 [7.1]=7.1.0)
declare -A ROCM_BUILD=([6.0]=91 [6.4]=47 [7.0]=38 [7.1]=52)
# component versions (before .<rocm number>-<build>~<release>)
declare -A V_HSA_ROCR=([6.0]=1.12.0 [6.4]=1.15.0 [7.0]=1.18.0 [7.1]=1.18.0)
declare -A V_HIP_RT=([6.0]=6.0.32830 [6.4]=6.4.43482 [7.0]=7.0.51831 [7.1]=7.1.25424)
declare -A V_ROCMINFO=([6.0]=1.0.0 [6.4]=1.0.0 [7.0]=1.0.0 [7.1]=1.0.0)
declare -A V_SMI=([6.0]=6.0.0 [6.4]=7.5.0 [7.0]=7.8.0 [7.1]=7.8.0)
# amdgpu driver lines: kernel-driver base version, rocm-ish number, build id.
# From 7.0 the driver line is decoupled (30.10) and amdgpu-dkms-firmware LOSES
# the epoch 1 -- the 6.4 -> 30.x firmware trap (ROCm/ROCm#5566) is reproduced.
declare -A AMDGPU_KBASE=([6.0]=6.3.6 [6.4]=6.12.12 [30.10]=6.14.14 [30.20]=6.16.6)
declare -A AMDGPU_NUM=([6.0]=60000 [6.4]=60400 [30.10]=30100000 [30.20]=30200000)
declare -A AMDGPU_BUILD=([6.0]=1697589 [6.4]=2147987 [30.10]=2204023 [30.20]=2238411)
declare -A AMDGPU_FW_EPOCH=([6.0]="1:" [6.4]="1:" [30.10]="" [30.20]="")
declare -A AMDGPU_FW_BASE=([6.0]=6.3.6 [6.4]=6.12.12 [30.10]=30.10.0.0 [30.20]=30.20.0.0)
declare -A SUITE_REL=([focal]=20.04 [jammy]=22.04 [noble]=24.04)

parse_lines() { # "<line>:<s1>,<s2> ..." -> "line suite" pairs on stdout
    local spec item line suites s
    spec=$1
    for item in $spec; do
        [[ $item == *:* ]] || die "bad line spec '$item' (want <line>:<suite>[,<suite>])"
        line=${item%%:*}; suites=${item#*:}
        for s in ${suites//,/ }; do printf '%s %s\n' "$line" "$s"; done
    done
}

# ---------------------------------------------------------------- tools
ensure_tools() {
    local missing=() pkgs=() t
    declare -A pkg_of=([apt-ftparchive]=apt-utils [gpg]=gnupg [gpg-agent]=gpg-agent
        [gpgconf]=gpgconf [dpkg-deb]=dpkg [gzip]=gzip [sha256sum]=coreutils [flock]=util-linux)
    for t in "${!pkg_of[@]}"; do
        command -v "$t" >/dev/null 2>&1 || { missing+=("$t"); pkgs+=("${pkg_of[$t]}"); }
    done
    [[ ${#missing[@]} -eq 0 ]] && return 0
    local sudo=()
    if [[ $(id -u) -ne 0 ]]; then
        if command -v sudo >/dev/null && sudo -n true 2>/dev/null; then sudo=(sudo -n); else
            die "missing tools: ${missing[*]}; install: apt-get install ${pkgs[*]}"
        fi
    fi
    command -v apt-get >/dev/null || die "missing tools: ${missing[*]} and no apt-get to install ${pkgs[*]}"
    say "installing missing tools (${missing[*]}): ${pkgs[*]}"
    "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update -qq
    "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${pkgs[@]}" >/dev/null
}

# ---------------------------------------------------------------- content key
content_key() {
    {
        echo "rocm=$LAB_ROCM_LINES"
        echo "amdgpu=$LAB_AMDGPU_LINES"
        (cd "$REPO" && sha256sum tests/lab/mirror/build.sh tests/lab/mirror/standins/* tests/lab/captures/*.txt)
    } | sha256sum | cut -c1-64
}

outputs_present() {
    local line suite
    [[ -s $LAB_DIR/rocm/rocm.gpg.key && -s $LAB_DIR/rocm/rocm.gpg.fingerprint ]] || return 1
    while read -r line suite; do
        [[ -s $LAB_DIR/rocm/apt/$line/dists/$suite/InRelease ]] || return 1
    done < <(parse_lines "$LAB_ROCM_LINES")
    while read -r line suite; do
        [[ -s $LAB_DIR/amdgpu/$line/ubuntu/dists/$suite/InRelease ]] || return 1
    done < <(parse_lines "$LAB_AMDGPU_LINES")
}

# ---------------------------------------------------------------- deb builder
# mkdeb <pooldir> <name> <version> <arch> <depends> <summary> <setup-fn> [args...]
# setup-fn is called with the package root as $1 (then args) to add files.
mkdeb() {
    local pool=$1 name=$2 version=$3 arch=$4 depends=$5 summary=$6 setup=$7
    shift 7
    local root=$WORK/pkgroot/$name-$RANDOM$RANDOM
    mkdir -p "$root/DEBIAN"
    "$setup" "$root" "$@"
    {
        echo "Package: $name"
        echo "Version: $version"
        echo "Architecture: $arch"
        echo "Maintainer: $MAINTAINER"
        [[ -n $depends ]] && echo "Depends: $depends"
        echo "Section: devel"
        echo "Priority: optional"
        echo "Description: $STANDIN_LINE ($summary)"
        echo " Built by radeonlab.llm's test lab (tests/lab/mirror/build.sh) to stand in"
        echo " for AMD's package of the same name on a machine without an AMD GPU."
        echo " It contains no AMD code and does nothing useful outside the lab."
    } > "$root/DEBIAN/control"
    local letter=${name:0:1}
    local dir=$pool/main/$letter/$name
    mkdir -p "$dir"
    # file name without the epoch, like dpkg-name / reprepro
    dpkg-deb --root-owner-group -Zgzip -z1 --build "$root" "$dir/${name}_${version#*:}_${arch}.deb" >/dev/null
    rm -rf "$root"
}

setup_none() { :; }

setup_marker() { # root prefix name : a file saying what this package stands in for
    mkdir -p "$1$2/share/radeonlab-lab/standin"
    printf '%s: %s\n' "$3" "$STANDIN_LINE" > "$1$2/share/radeonlab-lab/standin/$3"
}

setup_rocm_core() { # root prefix full build
    local root=$1 prefix=$2
    mkdir -p "$root$prefix/lib" "$root$prefix/lib64" "$root$prefix/bin" "$root$prefix/.info" "$root/opt"
    printf '%s-%s\n' "$3" "$4" > "$root$prefix/.info/version"
    ln -s "$(basename "$prefix")" "$root/opt/rocm"
    setup_marker "$root" "$prefix" rocm-core
}

setup_rocminfo() { # root prefix
    local root=$1 prefix=$2
    mkdir -p "$root$prefix/bin" "$root$prefix/share/radeonlab-lab/captures"
    install -m 0755 "$STANDINS/rocminfo" "$STANDINS/rocm_agent_enumerator" "$root$prefix/bin/"
    install -m 0644 "$CAPTURES_SRC"/*.txt "$root$prefix/share/radeonlab-lab/captures/"
    setup_marker "$root" "$prefix" rocminfo
}

setup_amdgpu_dkms() { # root srcver
    local root=$1 srcver=$2
    mkdir -p "$root/usr/src/amdgpu-$srcver" "$root/usr/share/doc/amdgpu-dkms"
    cat > "$root/usr/src/amdgpu-$srcver/dkms.conf" <<EOF
# $STANDIN_LINE: there is no driver source here and nothing is built.
PACKAGE_NAME="amdgpu"
PACKAGE_VERSION="$srcver"
AUTOINSTALL="no"
EOF
    printf 'amdgpu-dkms: %s\n' "$STANDIN_LINE" > "$root/usr/share/doc/amdgpu-dkms/RADEONLAB-LAB-STANDIN"
    cat > "$root/DEBIAN/postinst" <<EOF
#!/bin/sh
set -e
echo "amdgpu-dkms ($STANDIN_LINE): no kernel module is built or installed" >&2
exit 0
EOF
    chmod 0755 "$root/DEBIAN/postinst"
}

setup_amdgpu_fw() { # root fwver
    local root=$1
    mkdir -p "$root/lib/firmware/updates/amdgpu" "$root/usr/share/doc/amdgpu-dkms-firmware"
    printf 'amdgpu-dkms-firmware %s: %s (no firmware here)\n' "$2" "$STANDIN_LINE" \
        > "$root/lib/firmware/updates/amdgpu/RADEONLAB-LAB-STANDIN.txt"
    printf 'amdgpu-dkms-firmware: %s\n' "$STANDIN_LINE" > "$root/usr/share/doc/amdgpu-dkms-firmware/RADEONLAB-LAB-STANDIN"
}

# ---------------------------------------------------------------- repositories
build_rocm_suite() { # base line suite
    local base=$1 line=$2 suite=$3
    [[ -n ${ROCM_FULL[$line]:-} ]] || die "unknown ROCm line '$line' (known: ${!ROCM_FULL[*]})"
    [[ -n ${SUITE_REL[$suite]:-} ]] || die "unknown suite '$suite' (known: ${!SUITE_REL[*]})"
    local full=${ROCM_FULL[$line]} build=${ROCM_BUILD[$line]} rel=${SUITE_REL[$suite]}
    local a b c; IFS=. read -r a b c <<< "$full"
    local num=$((a * 10000 + b * 100 + c))
    local sfx=".$num-$build~$rel" prefix=/opt/rocm-$full pool=$base/pool
    local v_meta=$full$sfx v_core=$full$sfx
    local v_hsa=${V_HSA_ROCR[$line]}$sfx v_hip=${V_HIP_RT[$line]}$sfx
    local v_info=${V_ROCMINFO[$line]}$sfx v_smi=${V_SMI[$line]}$sfx
    local core="rocm-core (= $v_core)"
    mkdeb "$pool" rocm-core "$v_core" amd64 "" "ROCm core, /opt/rocm-$full" setup_rocm_core "$prefix" "$full" "$build"
    mkdeb "$pool" hsa-rocr "$v_hsa" amd64 "$core" "HSA runtime" setup_marker "$prefix" hsa-rocr
    mkdeb "$pool" rocminfo "$v_info" amd64 "$core, hsa-rocr (= $v_hsa)" \
        "rocminfo printing a recorded capture" setup_rocminfo "$prefix"
    mkdeb "$pool" hip-runtime-amd "$v_hip" amd64 "$core, hsa-rocr (= $v_hsa)" "HIP runtime" \
        setup_marker "$prefix" hip-runtime-amd
    mkdeb "$pool" rocm-smi-lib "$v_smi" amd64 "$core" "ROCm SMI library" setup_marker "$prefix" rocm-smi-lib
    mkdeb "$pool" rocm-language-runtime "$v_meta" amd64 "$core, hsa-rocr (= $v_hsa)" \
        "meta package" setup_none
    mkdeb "$pool" rocm-hip-runtime "$v_meta" amd64 \
        "$core, rocminfo (= $v_info), hsa-rocr (= $v_hsa), hip-runtime-amd (= $v_hip), rocm-language-runtime (= $v_meta)" \
        "meta package" setup_none
    mkdeb "$pool" rocm-hip-sdk "$v_meta" amd64 "$core, rocm-hip-runtime (= $v_meta)" "meta package" setup_none
    mkdeb "$pool" rocm-dev "$v_meta" amd64 \
        "$core, rocm-hip-runtime (= $v_meta), rocminfo (= $v_info), rocm-smi-lib (= $v_smi)" \
        "legacy meta package" setup_none
    mkdeb "$pool" rocm "$v_meta" amd64 \
        "$core, rocm-hip-runtime (= $v_meta), rocm-hip-sdk (= $v_meta), rocm-language-runtime (= $v_meta), rocm-smi-lib (= $v_smi)" \
        "meta package" setup_none
}

build_amdgpu_suite() { # base line suite
    local base=$1 line=$2 suite=$3
    [[ -n ${AMDGPU_KBASE[$line]:-} ]] || die "unknown amdgpu line '$line' (known: ${!AMDGPU_KBASE[*]})"
    [[ -n ${SUITE_REL[$suite]:-} ]] || die "unknown suite '$suite' (known: ${!SUITE_REL[*]})"
    local rel=${SUITE_REL[$suite]} kb=${AMDGPU_KBASE[$line]} num=${AMDGPU_NUM[$line]} bld=${AMDGPU_BUILD[$line]}
    local v_dkms="1:$kb.$num-$bld.$rel"
    local v_fw="${AMDGPU_FW_EPOCH[$line]}${AMDGPU_FW_BASE[$line]}.$num-$bld.$rel"
    mkdeb "$base/pool" amdgpu-dkms-firmware "$v_fw" all "" "amdgpu firmware" setup_amdgpu_fw "$v_fw"
    # unversioned-enough dependency, as in the real packages: an installed epoch-1
    # firmware satisfies it, which is what strands users on old firmware
    mkdeb "$base/pool" amdgpu-dkms "$v_dkms" all "amdgpu-dkms-firmware (>= $v_fw)" \
        "amdgpu kernel driver in DKMS format, nothing is built" setup_amdgpu_dkms "$kb-$bld.$rel"
}

# index + sign one suite. Release fields as on repo.radeon.com.
index_suite() { # base suite rel-id-pattern version description archs
    local base=$1 suite=$2 rel=$3 version=$4 desc=$5 archs=$6 a
    local d=$base/dists/$suite
    mkdir -p "$d/main/binary-amd64"
    (cd "$base" && apt-ftparchive packages pool/main 2>/dev/null) |
        awk -v a="~${rel}_" -v b=".${rel}_" 'BEGIN { RS = ""; ORS = "\n\n" } index($0, a) || index($0, b)' \
        > "$d/main/binary-amd64/Packages"
    [[ -s $d/main/binary-amd64/Packages ]] || die "empty Packages for $base $suite"
    for a in $archs; do
        [[ $a == amd64 ]] && continue
        mkdir -p "$d/main/binary-$a"; : > "$d/main/binary-$a/Packages"
    done
    for a in $archs; do gzip -9nk "$d/main/binary-$a/Packages"; done
    apt-ftparchive \
        -o APT::FTPArchive::Release::Origin=repo.radeon.com \
        -o APT::FTPArchive::Release::Label=repo.radeon.com \
        -o APT::FTPArchive::Release::Suite="$suite" \
        -o APT::FTPArchive::Release::Codename="$suite" \
        -o APT::FTPArchive::Release::Version="$version" \
        -o APT::FTPArchive::Release::Architectures="$archs" \
        -o APT::FTPArchive::Release::Components=main \
        -o APT::FTPArchive::Release::Description="$desc" \
        release "$d" > "$WORK/Release"
    mv "$WORK/Release" "$d/Release"
    gpg --batch --yes --local-user "$FPR" --digest-algo SHA256 --clearsign -o "$d/InRelease" "$d/Release"
    gpg --batch --yes --local-user "$FPR" --digest-algo SHA256 --armor --detach-sign -o "$d/Release.gpg" "$d/Release"
}

ensure_key() {
    export GNUPGHOME=$LAB_DIR/.private/gnupg
    mkdir -p "$GNUPGHOME"; chmod 700 "$LAB_DIR/.private" "$GNUPGHOME"
    FPR=$(gpg --batch --quiet --with-colons --list-secret-keys 2>/dev/null | awk -F: '/^fpr:/ && !n++ { print $10 }')
    if [[ -z $FPR ]]; then
        say "generating throwaway signing key in $GNUPGHOME"
        gpg --batch --pinentry-mode loopback --passphrase '' \
            --quick-gen-key "$KEY_UID" rsa3072 sign never 2>/dev/null
        FPR=$(gpg --batch --quiet --with-colons --list-secret-keys | awk -F: '/^fpr:/ && !n++ { print $10 }')
    fi
    [[ $FPR =~ ^[0-9A-F]{40}$ ]] || die "could not get the signing key fingerprint (got '$FPR')"
}

stop_agent() {
    if [[ -n ${GNUPGHOME:-} && -d $GNUPGHOME ]]; then gpgconf --kill gpg-agent 2>/dev/null || true; fi
}

# ---------------------------------------------------------------- main
main() {
    ensure_tools
    mkdir -p "$LAB_DIR"
    exec 9> "$LAB_DIR/.build.lock"
    flock 9

    local key; key=$(content_key)
    if [[ $LAB_FORCE != 1 && -f $LAB_DIR/.build-key && $(cat "$LAB_DIR/.build-key") == "$key" ]] && outputs_present; then
        say "up to date (content key ${key:0:12}), nothing to do: $LAB_DIR"
        say "fingerprint $(cat "$LAB_DIR/rocm/rocm.gpg.fingerprint") in $LAB_DIR/rocm/rocm.gpg.fingerprint"
        return 0
    fi

    local t0=$SECONDS
    ensure_key
    trap 'stop_agent; rm -rf "${WORK:-/nonexistent}"' EXIT
    WORK=$(mktemp -d "$LAB_DIR/.work.XXXXXX")
    local stage=$WORK/stage line suite
    mkdir -p "$stage/rocm" "$stage/amdgpu"

    gpg --batch --armor --export "$FPR" > "$stage/rocm/rocm.gpg.key"
    echo "$FPR" > "$stage/rocm/rocm.gpg.fingerprint"

    declare -A rocm_suites=() amdgpu_suites=()
    while read -r line suite; do
        build_rocm_suite "$stage/rocm/apt/$line" "$line" "$suite"
        rocm_suites[$line]+=" $suite"
    done < <(parse_lines "$LAB_ROCM_LINES")
    while read -r line suite; do
        build_amdgpu_suite "$stage/amdgpu/$line/ubuntu" "$line" "$suite"
        amdgpu_suites[$line]+=" $suite"
    done < <(parse_lines "$LAB_AMDGPU_LINES")
    for line in "${!rocm_suites[@]}"; do
        for suite in ${rocm_suites[$line]}; do
            index_suite "$stage/rocm/apt/$line" "$suite" "${SUITE_REL[$suite]}" "$line" "ROCm APT Repository" amd64
        done
    done
    for line in "${!amdgpu_suites[@]}"; do
        for suite in ${amdgpu_suites[$line]}; do
            index_suite "$stage/amdgpu/$line/ubuntu" "$suite" "${SUITE_REL[$suite]}" "$line" \
                "AMDGPU Ubuntu $suite repository" "i386 amd64"
        done
    done
    cat > "$stage/LAB-STANDIN-README.txt" <<EOF
radeonlab lab mirror -- a STAND-IN for repo.radeon.com built by tests/lab/mirror/build.sh.
Every package here is a $STANDIN_LINE. Signed by a throwaway key:
$FPR
EOF

    # swap into place (the server may be running; each tree is replaced by a rename)
    local d
    for d in rocm amdgpu; do
        rm -rf "$LAB_DIR/.old-$d"
        [[ -e $LAB_DIR/$d ]] && mv "$LAB_DIR/$d" "$LAB_DIR/.old-$d"
        mv "$stage/$d" "$LAB_DIR/$d"
        rm -rf "$LAB_DIR/.old-$d"
    done
    mv "$stage/LAB-STANDIN-README.txt" "$LAB_DIR/LAB-STANDIN-README.txt"
    echo "$key" > "$LAB_DIR/.build-key"
    local ndebs; ndebs=$(find "$LAB_DIR/rocm" "$LAB_DIR/amdgpu" -name '*.deb' | wc -l)
    say "built $ndebs stand-in packages in $((SECONDS - t0))s (content key ${key:0:12}): $LAB_DIR"
    say "rocm lines: $LAB_ROCM_LINES; amdgpu lines: $LAB_AMDGPU_LINES"
    say "fingerprint $FPR in $LAB_DIR/rocm/rocm.gpg.fingerprint"
}

main "$@"
