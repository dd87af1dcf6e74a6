# The image and the packages (deploy/README.md).
#
# make image: podman builds deploy/Containerfile into $(IMAGE), from a
# context of $(O)/image holding steptime-static alone (nothing pulled:
# FROM scratch). deploy/k8s/daemonset.yaml names the same image.
IMAGE		?= steptime:$(STEPTIME_VERSION)
IMAGE_CTX	:= $(O)/image

$(IMAGE_CTX)/steptime-static: $(O)/steptime-static
	$(Q)mkdir -p $(@D)
	$(Q)cp $< $@

image: $(IMAGE_CTX)/steptime-static
	$(Q)podman build -q --build-arg VERSION=$(STEPTIME_VERSION) -t $(IMAGE) \
		-f deploy/Containerfile $(IMAGE_CTX)

# make deb, make rpm: the app library, CLI, Python module, man pages,
# systemd units and Prometheus rules, in $(O)/pkg. Both from one staged
# tree (`make install` into it, scripts/package.sh completes it), so that
# they hold the same files: Debian's layout (PREFIX=/usr).
PKG_STAGE	:= $(O)/pkg/stage

pkg-stage: $(INSTALL_DEPS)
	$(Q)rm -rf $(PKG_STAGE)
	$(Q)$(MAKE) --no-print-directory install DESTDIR=$(abspath $(PKG_STAGE)) \
		PREFIX=/usr PYDIR=/usr/lib/python3/dist-packages >/dev/null
	$(Q)scripts/package.sh stage $(abspath $(PKG_STAGE))

deb: pkg-stage
	$(Q)scripts/package.sh deb $(abspath $(PKG_STAGE)) $(O)/pkg $(STEPTIME_VERSION)

rpm: pkg-stage
	$(Q)scripts/package.sh rpm $(abspath $(PKG_STAGE)) $(O)/pkg $(STEPTIME_VERSION)
