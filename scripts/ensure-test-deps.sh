#!/usr/bin/env bash
# Install the system packages the software-configuration tests need: a real
# OpenSSH server (the SSH transport is tested against sshd on loopback) and
# the OpenSSH client (ansible-playbook's ssh connection uses it), sudo
# (the SSH transport's optional sudo is tested for real), and OpenLDAP's
# slapd with ldap-utils (examples/cluster-workflow's directory runs a real
# provider and consumer, each as an unprivileged user on its own address),
# and Debian's chromium with a fixed font (the dashboard's browser tests
# drive it through Playwright, which must never download a browser of its
# own; screenshots are compared with baselines, so the font must not vary).
#
# Why a script and not a pytest skip: a test suite that silently skips its SSH
# tests on a machine without sshd proves nothing. CI machines start fresh, so
# the project's own files must install what the tests need.
#
# It does nothing when both are present, and nothing when not run as root
# (it then only says what is missing; the tests will report it too).
set -euo pipefail

# Local nodes can run their processes as another OS user (PostgreSQL refuses
# to run as root); the tests use this unprivileged one.
if [[ $(id -u) -eq 0 ]] && ! getent passwd convection-test >/dev/null; then
    useradd --system --no-create-home --shell /usr/sbin/nologin convection-test
    echo "ensure-test-deps: created user convection-test"
fi

need=()
[[ -x /usr/sbin/sshd ]] || need+=(openssh-server)
command -v ssh >/dev/null 2>&1 && command -v ssh-keygen >/dev/null 2>&1 || need+=(openssh-client)
[[ -x /usr/bin/sudo ]] || need+=(sudo)
[[ -x /usr/sbin/slapd ]] || need+=(slapd)
command -v ldapadd >/dev/null 2>&1 && command -v ldapsearch >/dev/null 2>&1 || need+=(ldap-utils)
[[ -x /usr/bin/chromium ]] || need+=(chromium)
[[ -f /usr/share/fonts/truetype/dejavu/DejaVuSans.ttf ]] || need+=(fonts-dejavu-core)

if [[ ${#need[@]} -eq 0 ]]; then
    exit 0
fi

if [[ $(id -u) -ne 0 ]]; then
    echo "ensure-test-deps: missing ${need[*]}; run this script as root to install them" >&2
    exit 0
fi

export DEBIAN_FRONTEND=noninteractive
# Debian's slapd postinst starts a system slapd (and sshd's starts sshd):
# the tests start their own servers, so no package may start a service.
# policy-rc.d answering 101 tells invoke-rc.d "not allowed"; ours is removed
# afterwards, an existing one is left alone.
policy=/usr/sbin/policy-rc.d
own_policy=0
if [[ ! -e $policy ]]; then
    printf '#!/bin/sh\nexit 101\n' > "$policy"
    chmod 0755 "$policy"
    own_policy=1
fi
trap '[[ $own_policy -eq 1 ]] && rm -f "$policy"' EXIT
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
echo "ensure-test-deps: installed ${need[*]}"
# Belt and braces: a system slapd must not hold port 389 or run at boot.
if [[ " ${need[*]} " == *" slapd "* ]]; then
    if command -v systemctl >/dev/null 2>&1 && [[ -d /run/systemd/system ]]; then
        systemctl disable --now slapd >/dev/null 2>&1 || true
    elif [[ -x /etc/init.d/slapd ]]; then
        /etc/init.d/slapd stop >/dev/null 2>&1 || true
    fi
fi
