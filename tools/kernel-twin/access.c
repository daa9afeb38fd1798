/* The twin of scenarios' `kind = "anon"`, `init = true`, `pattern = "uniform"`,
 * `write_ratio = 1.0`: map PAGES pages of private anonymous memory, write each once
 * in order, then PASSES x PAGES writes to pages drawn uniformly at random.
 * FILL bytes of each page are random at the first write (2048 gives zram lzo-rle a
 * compression ratio of about 1.9), the rest zero. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <time.h>

static uint64_t s = 0x9E3779B97F4A7C15ull;
static inline uint64_t rnd(void) { s ^= s << 13; s ^= s >> 7; s ^= s << 17; return s; }
static double now(void) { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec + t.tv_nsec / 1e9; }

int main(int argc, char **argv) {
	size_t pages = argc > 1 ? strtoull(argv[1], 0, 0) : 196608;
	long passes = argc > 2 ? atol(argv[2]) : 10;
	int fill = getenv("FILL") ? atoi(getenv("FILL")) : 2048;
	char *p = mmap(0, pages * 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED) { perror("mmap"); return 1; }
	double t0 = now();
	for (size_t i = 0; i < pages; i++) {
		uint64_t *q = (uint64_t *)(p + i * 4096);
		for (int j = 0; j < fill / 8; j++) q[j] = rnd();
		p[i * 4096 + 4095] = 1;
	}
	double t1 = now();
	for (long k = 0; k < (long)pages * passes; k++)
		p[(rnd() % pages) * 4096 + (k & 4095)] = (char)k;
	printf("init %.3f s, passes %.3f s\n", t1 - t0, now() - t1);
	return 0;
}
