// SPDX-License-Identifier: GPL-2.0
/*
 * One rank per device, as on an 8-device server: hal_steps (prog/) runs a
 * process per npusim device through the ACL runtime and libascend_hal.so
 * stand-ins, every process's stream created before any step runs. Checked
 * here on what hal_steps prints of npusim's truth:
 *   - the ids collide: every device gave its process the same stream id
 *     and SQ id (each numbers them from the same start), so only the
 *     device tells the processes' queues apart;
 *   - every step's kernels are in npusim's truth of that step's span, all
 *     completed, and passed the SQE trace hook exactly in the modes where
 *     the kernel sees SQEs (uio_t copies, kio SEND), never in uio_d.
 * Each variant sets every device's mode (config sq_mode, stars, send_mode,
 * uio_mode) and restores the device's config afterwards; module_default
 * sets none and expects what the module parameters give (mode_by_chip=1:
 * the chip's, uio_t on a 910B3; 0: kio). run_vm.sh loads npusim with
 * devices=8 for it (this folder's settings): any other count fails, so
 * that a setting that was not applied shows.
 */
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <npusim_abi.h>
#include "kselftest_harness.h"
#include "ksft_filter.h"
#include "st_run.h"

#define RANKS	8
#define STEPS	3
#define TASKS	5

FIXTURE(ranks) {
	int ctl;
	unsigned int devices;
	struct npusim_config saved[NPUSIM_MAX_DEVICES];
};

FIXTURE_VARIANT(ranks) {
	uint32_t sq_mode;
	uint32_t stars;
	uint32_t send_mode;
	uint32_t uio_mode;
	bool traced;
	const char *mode;	/* the SQs' mode, hal_steps' mode= */
	bool module;		/* set nothing: the module's defaults */
};

FIXTURE_VARIANT_ADD(ranks, uio_t_910b3) {
	.sq_mode = NPUSIM_SQ_MODE_CHIP, .stars = 1, .traced = true,
	.mode = "uio_t",
};

FIXTURE_VARIANT_ADD(ranks, uio_d_950) {
	.sq_mode = NPUSIM_SQ_MODE_CHIP, .stars = 2, .traced = false,
	.mode = "uio_d",
};

FIXTURE_VARIANT_ADD(ranks, kio_950_high_security) {
	.sq_mode = NPUSIM_SQ_MODE_CHIP, .stars = 2,
	.send_mode = NPUSIM_SEND_HIGH_SECURITY, .traced = true, .mode = "kio",
};

/* kio named through npusim's config, whatever the chip */
FIXTURE_VARIANT_ADD(ranks, kio_config) {
	.sq_mode = NPUSIM_SQ_MODE_CONFIG, .stars = 1,
	.uio_mode = NPUSIM_UIO_KIO, .traced = true, .mode = "kio",
};

/* the module's parameters decide (traced either way on a 910B3) */
FIXTURE_VARIANT_ADD(ranks, module_default) {
	.module = true, .traced = true,
};

static unsigned int sim_param(const char *name)
{
	char path[96];
	unsigned int n = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/sys/module/npusim/parameters/%s", name);
	f = fopen(path, "r");

	if (f) {
		if (fscanf(f, "%u", &n) != 1)
			n = 0;
		fclose(f);
	}
	return n;
}

FIXTURE_SETUP(ranks)
{
	struct npusim_config c;
	unsigned int d;

	self->devices = sim_param("devices");
	ASSERT_EQ(RANKS, self->devices)
		TH_LOG("npusim has %u devices: load it with devices=%d",
		       self->devices, RANKS);
	self->ctl = open("/dev/" NPUSIM_DEV_NAME, O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, self->ctl);
	for (d = 0; d < self->devices && !variant->module; d++) {
		self->saved[d] = (struct npusim_config){ .device = d };
		ASSERT_EQ(0, ioctl(self->ctl, NPUSIM_IOC_GET_CONFIG,
				   &self->saved[d]));
		c = (struct npusim_config){
			.mask = NPUSIM_CFG_STARS | NPUSIM_CFG_SQ_MODE |
				NPUSIM_CFG_SEND_MODE | NPUSIM_CFG_UIO_MODE,
			.device = d, .stars = variant->stars,
			.sq_mode = variant->sq_mode,
			.send_mode = variant->send_mode,
			.uio_mode = variant->uio_mode,
		};
		ASSERT_EQ(0, ioctl(self->ctl, NPUSIM_IOC_SET_CONFIG, &c))
			TH_LOG("device %u: %s", d, strerror(errno));
	}
}

FIXTURE_TEARDOWN(ranks)
{
	unsigned int d;

	if (self->devices != RANKS)
		return;
	for (d = 0; d < self->devices && !variant->module; d++) {
		self->saved[d].mask = NPUSIM_CFG_STARS | NPUSIM_CFG_SQ_MODE |
				      NPUSIM_CFG_SEND_MODE | NPUSIM_CFG_UIO_MODE;
		ioctl(self->ctl, NPUSIM_IOC_SET_CONFIG, &self->saved[d]);
	}
	close(self->ctl);
}

/* hal_steps beside the test programs' folder: $O/selftests/hal_steps. */
static void prog_path(char *buf, size_t len)
{
	char exe[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);

	exe[n > 0 ? n : 0] = 0;
	snprintf(buf, len, "%s/../hal_steps", dirname(exe));
}

TEST_F_TIMEOUT(ranks, one_per_device, 600)
{
	const char *mode = variant->mode;
	long stream = -1, sq = -1, sqes;
	char want[32];
	unsigned int procs = 0, steps = 0;
	char prog[PATH_MAX + 16], cmd[PATH_MAX + 64], line[512];
	bool seen[NPUSIM_MAX_DEVICES] = { 0 };
	FILE *f;
	int st;

	if (variant->module) {
		if (sim_param("stars") != 1)
			SKIP(return, "module_default expects a 910B3 (stars=1)");
		mode = sim_param("mode_by_chip") ? "uio_t" : "kio";
	}
	snprintf(want, sizeof(want), " mode=%s ", mode);
	prog_path(prog, sizeof(prog));
	ASSERT_EQ(0, access(prog, X_OK)) TH_LOG("%s: %s", prog, strerror(errno));
	snprintf(cmd, sizeof(cmd), "%s -n %u -m %d -t %d", prog,
		 self->devices, STEPS, TASKS);
	f = popen(cmd, "r");
	ASSERT_NE(NULL, f);
	while (fgets(line, sizeof(line), f)) {
		TH_LOG("%.*s", (int)strcspn(line, "\n"), line);
		/* a field hal_steps did not print (-1) matches nothing */
		ASSERT_LE(0, st_field(line, "stream")) TH_LOG("no stream=");
		ASSERT_LE(0, st_field(line, "sq")) TH_LOG("no sq=");
		if (stream < 0) {
			/* the first line's ids: every other device's are these */
			stream = st_field(line, "stream");
			sq = st_field(line, "sq");
		} else {
			EXPECT_EQ(stream, st_field(line, "stream"));
			EXPECT_EQ(sq, st_field(line, "sq"));
		}
		if (!strncmp(line, "proc ", 5)) {
			long d = st_field(line, "dev");

			ASSERT_TRUE(d >= 0 && d < (long)self->devices);
			EXPECT_FALSE(seen[d]);
			seen[d] = true;
			EXPECT_EQ(st_field(line, "submitted"),
				  st_field(line, "completed"));
			EXPECT_NE(NULL, strstr(line, want)) TH_LOG("want%s", want);
			procs++;
			continue;
		}
		sqes = st_field(line, "sqes");
		EXPECT_EQ(TASKS, st_field(line, "tasks"));
		EXPECT_EQ(sqes, st_field(line, "completed"));
		EXPECT_EQ(variant->traced ? sqes : 0, st_field(line, "traced"));
		steps++;
	}
	st = pclose(f);
	EXPECT_EQ(0, st);
	EXPECT_EQ(self->devices, procs);
	EXPECT_EQ(self->devices * STEPS, steps);
}

TEST_HARNESS_MAIN
