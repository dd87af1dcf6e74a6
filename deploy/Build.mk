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
