#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# `make deb` and `make rpm`: one staged tree, two packages with the same
# files (selftests/deploy/test_packages.sh checks they match).
#
#   scripts/package.sh stage STAGE      complete `make install DESTDIR=STAGE
#                                       PREFIX=/usr`'s tree: units, rules
#   scripts/package.sh deb STAGE OUTDIR VERSION   dpkg-deb
#   scripts/package.sh rpm STAGE OUTDIR VERSION   rpmbuild (Debian's rpm)
#
# The layout is Debian's (/usr/lib, /usr/lib/python3/dist-packages), kept
# in the .rpm so that both list the same files; on openEuler the Python
# module is then found with PYTHONPATH=/usr/lib/python3/dist-packages.
set -euo pipefail

cmd=${1:?command}
stage=${2:?stage}
PYDIR=/usr/lib/python3/dist-packages

# What removal must also take: the byte code python3 writes next to the
# modules at their first import (as root), which no package lists.
PRERM="rm -rf $PYDIR/steptime/__pycache__ $PYDIR/__pycache__/_steptime_torch.*.pyc"
SUMMARY="per-training-step device timing for Ascend NPUs (eBPF)"
DESCRIPTION="steptime times each training step on the NPU and the host: a CO-RE eBPF
program on the driver's ioctls, its loader and CLI (steptime load, stat,
trace, top, export), the app library libsteptime and its Python module,
systemd units and Prometheus rules."

stage_tree() {
	local s=$stage u
	# install.sh's manifest is for `make uninstall`: the package manager
	# keeps its own.
	rm -rf "$s/usr/lib/steptime"
	gzip -9nf "$s"/usr/share/man/man*/*.[0-9]
	mkdir -p "$s/usr/lib/systemd/system" "$s/usr/share/steptime/prometheus"
	for u in steptime-load steptime-export; do
		sed 's|/usr/local/bin/steptime|/usr/bin/steptime|g' \
			"deploy/systemd/$u.service" >"$s/usr/lib/systemd/system/$u.service"
		# The drop-ins are examples of a host's settings, not defaults.
		install -D -m 0644 "deploy/systemd/$u.service.d/steptime.conf" \
			"$s/usr/share/steptime/systemd/$u.service.d/steptime.conf"
	done
	install -m 0644 deploy/prometheus/steptime.rules.yml \
		deploy/prometheus/steptime.rules.test.yml "$s/usr/share/steptime/prometheus/"
}

# Every file and symlink of the tree, as an absolute path.
files() {
	(cd "$stage" && find . ! -type d | sed 's|^\.||' | LC_ALL=C sort)
}

# The tree's directories that are the package's own (the others, /usr/bin
# and such, belong to the system).
own_dirs() {
	(cd "$stage" && find . -type d | sed 's|^\.||' | LC_ALL=C sort) |
		grep -E '/steptime|\.service\.d$|/include/(acl|mstx)$'
}

deb() {
	local out=$1 version=$2 arch d
	arch=$(dpkg --print-architecture)
	d=$(mktemp -d)
	trap 'rm -rf "$d"' RETURN
	cp -a "$stage" "$d/root"
	mkdir -p "$d/root/DEBIAN"
	cat >"$d/root/DEBIAN/control" <<-EOF
	Package: steptime
	Version: $version
	Architecture: $arch
	Maintainer: steptime maintainers <steptime@localhost>
	Section: devel
	Priority: optional
	Depends: libc6 (>= 2.34), libbpf1 (>= 1:1.0), libelf1, zlib1g
	Recommends: python3
	Installed-Size: $(du -sk --exclude=DEBIAN "$d/root" | cut -f1)
	Description: $SUMMARY
	 ${DESCRIPTION//$'\n'/$'\n' }
	EOF
	# The library's cache, as Debian's libraries refresh it.
	echo "activate-noawait ldconfig" >"$d/root/DEBIAN/triggers"
	printf '#!/bin/sh\nset -e\n%s\n' "$PRERM" >"$d/root/DEBIAN/prerm"
	chmod 0755 "$d/root/DEBIAN/prerm"
	mkdir -p "$out"
	dpkg-deb --root-owner-group -Zxz --build "$d/root" \
		"$out/steptime_${version}_$arch.deb" >/dev/null
	echo "$out/steptime_${version}_$arch.deb"
}

rpm() {
	local out=$1 version=$2 d
	d=$(mktemp -d)
	trap 'rm -rf "$d"' RETURN
	{
		cat <<-EOF
		Name: steptime
		Version: $version
		Release: 1
		Summary: $SUMMARY
		License: GPL-2.0 AND (LGPL-2.1 OR BSD-2-Clause)
		Requires: python3
		# The staged tree as it is: no stripping, no byte code, no build-id
		# links (the .deb's files exactly).
		%global __os_install_post %{nil}
		%global debug_package %{nil}
		%global _build_id_links none
		%description
		$DESCRIPTION
		%install
		cp -a $stage/. %{buildroot}/
		%post -p /sbin/ldconfig
		%preun
		$PRERM
		%postun -p /sbin/ldconfig
		%files
		%defattr(-,root,root,-)
		EOF
		own_dirs | sed 's/^/%dir /'
		files
	} >"$d/steptime.spec"
	mkdir -p "$out"
	rpmbuild -bb --quiet --define "_topdir $d" --define "_rpmdir $(realpath "$out")" \
		--define '_build_name_fmt %%{NAME}-%%{VERSION}-%%{RELEASE}.%%{ARCH}.rpm' \
		"$d/steptime.spec" >/dev/null
	ls "$out"/steptime-"$version"-1.*.rpm
}

case $cmd in
stage)	stage_tree ;;
deb)	deb "${3:?outdir}" "${4:?version}" ;;
rpm)	rpm "${3:?outdir}" "${4:?version}" ;;
*)	echo "usage: $0 stage|deb|rpm STAGE [OUTDIR VERSION]" >&2; exit 2 ;;
esac
