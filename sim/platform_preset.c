/* platform_preset.c - dtsim's named platforms: each preset fills a platform_spec that the
 * generator (platform_gen.c) writes, so a preset is one function of figures, each with its
 * source here and in platforms/README.md, Presets. */

#include "sim/platform.h"

#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

typedef struct preset {
  const char *name;
  const char *description;
  void (*fill)(size_t hosts, platform_spec *spec);
} preset;

/* Dean et al., "Large Scale Distributed Deep Networks", NIPS 2012 (DistBelief), on the
 * fabric Google ran in 2011-2012. Every number's source is in platforms/README.md, Presets.
 * - 16 cores per machine: the paper reports "average CPU utilization of 16 cores" per
 *   machine and says machines have at most 20 cores.
 * - 20.8 Gflop/s per core: ASSUMPTION, a 2012 Xeon E5 (Sandy Bridge) at 2.6 GHz doing
 *   8 double-precision flops per cycle with AVX; the paper names no CPU.
 * - The network is Saturn's (Singh et al., "Jupiter Rising", SIGCOMM 2015, sec. 3.4 and
 *   Table 2), Google's cluster fabric from 2009 until Jupiter (2012): 10 GbE servers
 *   under Pluto top-of-rack switches, 20 servers and 4 x 10G uplinks per ToR in the
 *   default configuration (an average of 2 Gb/s per server, bursts of 10 Gb/s), and a
 *   non-blocking fabric above them. SimGrid's FAT_TREE gives every link one bandwidth:
 *   20 hosts and 4 uplinks of 10 Gb/s per leaf are exactly that 5:1.
 * - 50 us per link: ASSUMPTION (a NIC, a kernel TCP stack and a switch hop).
 * - LV08: SimGrid's model calibrated for TCP over Ethernet, which the cluster ran.
 * - 1,280 hosts (64 racks) by default; asked for more or fewer, whole racks are added. */
static void fill_distbelief_2012(size_t hosts, platform_spec *spec)
{
  spec->topology = PLATFORM_FAT_TREE;
  spec->hosts = hosts ? hosts : 1280;
  spec->speed = 2.6e9 * 8;
  spec->cores = 16;
  spec->bw = 10e9 / 8;
  spec->lat = 50e-6;
  spec->hosts_per_rack = 20;
  spec->uplinks = 4;
  spec->network_model = "LV08";
  spec->name = "host";
}

/* Google's cluster network of 2004, before its fabrics (Jupiter Rising, sec. 2): "40
 * servers connected at 1Gb/s to a ToR switch with approximately 10:1 oversubscription";
 * machines as distbelief-2012's. What distbelief-2012 was until it took Saturn's network:
 * 1 GbE, racks of 40 with 4 uplinks of 1 Gb/s (SimGrid's FAT_TREE: one bandwidth for all
 * links, so the 10:1 is the uplink count), 50 us per link, LV08; 1,280 hosts by default. */
static void fill_google_2004(size_t hosts, platform_spec *spec)
{
  fill_distbelief_2012(hosts, spec);
  spec->bw = 125e6;
  spec->hosts_per_rack = 40;
  spec->uplinks = 4;
}

/* DistBelief's GPU baseline (Dean'12 sec. 5: "the same model on a single GPU", with
 * CUDA; the paper names no GPU).
 * - 1,331 Gflop/s: ASSUMPTION, a 2012 Tesla M2090 (Fermi: 512 CUDA cores x 1.3 GHz x 2
 *   single-precision flops per fused multiply-add); one core, as a GPU is one device.
 * - One host by default; more hosts form a 1 GbE star (125e6 bytes/s, 50 us, LV08, as
 *   distbelief-2012), which a one-GPU baseline never uses. */
static void fill_gpu_2012(size_t hosts, platform_spec *spec)
{
  spec->topology = PLATFORM_STAR;
  spec->hosts = hosts ? hosts : 1;
  spec->speed = 512 * 1.3e9 * 2;
  spec->cores = 1;
  spec->bw = 125e6;
  spec->lat = 50e-6;
  spec->network_model = "LV08";
  spec->name = "gpu";
}

/* GPU nodes for tensor parallelism (the writer's gpus_per_node form): every number and
 * its source is in platforms/README.md, Presets. Link bandwidths are per direction
 * (SPLITDUPLEX): NVIDIA's "300 GB/s" (V100, 6 NVLink2 links x 50 GB/s) and "600 GB/s"
 * (A100, 12 NVLink3 links x 50 GB/s) count both directions, so a GPU sends at 150e9
 * and 300e9 B/s; InfiniBand rates are per direction: 8 x 100 Gb/s = 100e9 B/s per DGX-2H
 * (Megatron-LM's "100 GB/s between servers"), 8 x 200 Gb/s = 200e9 B/s per Selene node.
 * CM02 with no cross traffic, under which the collectives' alpha-beta formulas hold. */
static void fill_gpu_nodes(size_t hosts, size_t per_node, size_t default_nodes, platform_spec *spec)
{
  spec->topology = PLATFORM_STAR;
  spec->hosts = hosts ? hosts : per_node * default_nodes;
  spec->cores = 1;
  spec->gpus_per_node = per_node;
  spec->network_model = "CM02";
  spec->name = "gpu";
}

/* The share of an SM's peak cuBLAS's GEMM main loop sustains on a full tile: the kernel
 * model's one fitted number per GPU, fitted on the largest of Baidu DeepBench's V100 GEMMs
 * (8448 x 48000 x 2816, 107.6 Tflop/s; `dtsim reproduce gemm` fits it again and checks the
 * other 159 rows with it), to 4 digits. The A100 takes the V100's (ASSUMPTION: DeepBench has
 * no A100 results). */
#define CUBLAS_GEMM_EFF 0.8631

/* The SMs NCCL's collective kernels hold on a GPU while a collective runs: one CUDA block
 * per channel, each on an SM of its own that no compute kernel shares, and on a DGX with 8
 * NICs, 16 of them (the NCCL maintainers, NVIDIA/nccl issue 689). Both GPU presets are
 * DGX nodes with 8 NICs (ASSUMPTION: the count NCCL 2.4 chose on a DGX-2H in 2019 is not
 * published; 16 is what the maintainers give for today's NCCL on such a node). */
#define NCCL_DGX_SMS 16

/* A host CPU's link to its GPU (platform_spec.pcie_bw), per direction: 16 lanes at 8, 16 and 32
 * GT/s with 128b/130b coding (the PCI-SIG's 3.0, 4.0 and 5.0 rates): the V100 SXM3 of a DGX-2H,
 * the A100 of a DGX A100 and the H100 and B200 of today's DGX reach their host over PCIe switches
 * of these generations (NVIDIA's DGX-2, DGX A100, DGX H100 and B200 user guides). */
#define PCIE3_X16 (16 * 8e9 * 128 / 130 / 8)
#define PCIE4_X16 (2 * PCIE3_X16)
#define PCIE5_X16 (4 * PCIE3_X16)

/* Megatron-LM (Shoeybi et al. 2019): up to 32 DGX-2H of 16 V100 each; 125 Tflop/s fp16
 * tensor-core peak per V100 (NVIDIA's V100 SXM3 figure, of which Megatron's 39 Tflop/s
 * is 30%); 900 GB/s of HBM2 per V100 (NVIDIA's V100 datasheet); 0.5 us per NVSwitch link
 * and 1 us per IB link are ASSUMPTIONS. The V100's 80 SMs (NVIDIA's Volta whitepaper), its
 * L2 at 2,155 GB/s (measured: Jia et al. 2018, arXiv 1804.06826, Table 3.1), 7 us per
 * kernel (the floor of Baidu DeepBench's V100 GEMM times: 8 us for 512 x 16 x 512, whose
 * data takes 0.6 us). NCCL reaches 0.8 of NVLink's line rate (25 GB/s per link and
 * direction carry ~20 GB/s of 128-byte payloads: the NCCL maintainers, NVIDIA/nccl-tests
 * issue 149) and 12 of a 100 Gb/s NIC's 12.5 GB/s (nccl-tests issue 119). */
static void fill_dgx2h(size_t hosts, platform_spec *spec)
{
  fill_gpu_nodes(hosts, 16, 32, spec);
  spec->speed = 125e12;
  spec->mem_bw = 900e9;
  spec->bw = 150e9;
  spec->lat = 0.5e-6;
  spec->node_bw = 8 * 100e9 / 8;
  spec->node_lat = 1e-6;
  spec->gpu_sms = 80;
  spec->gpu_comm_sms = NCCL_DGX_SMS;
  spec->gpu_gemm_eff = CUBLAS_GEMM_EFF;
  spec->gpu_l2_bw = 2155e9;
  spec->gpu_launch = 7e-6;
  spec->bw_eff = 20.0 / 25;
  spec->node_bw_eff = 12 / 12.5;
  spec->pcie_bw = PCIE3_X16;
}

/* PTD-P (Narayanan et al. 2021): Selene, 8 A100 80GB per node, 312 Tflop/s fp16 peak,
 * 2,039 GB/s of HBM2e (NVIDIA's A100 80GB SXM datasheet), NVSwitch, 8 x 200 Gb/s HDR IB per
 * node in a (non-blocking) 3-level fat tree; 8 nodes (64 GPUs) by default; latencies as
 * dgx2h (ASSUMPTIONS). The A100's 108 SMs (NVIDIA's A100 whitepaper); its L2 the V100's
 * measured 2,155 GB/s times the whitepaper's ratio of L2 read bandwidth (5,120 against 2,048
 * bytes per clock, at 1,410 against 1,530 MHz: 4.965e12); 7 us per kernel as the V100 (ASSUMPTION:
 * DeepBench has no A100 results). NCCL reaches ~230 of NVSwitch's 300 GB/s on A100 (the
 * NCCL maintainers, nccl-tests issue 149) and 24 of a 200 Gb/s NIC's 25 GB/s (issue 119). */
#define A100_L2_BW 4.965e12 /* 2155e9 x (5120 x 1410) / (2048 x 1530), to 4 digits */
static void fill_selene(size_t hosts, platform_spec *spec)
{
  fill_gpu_nodes(hosts, 8, 8, spec);
  spec->speed = 312e12;
  spec->mem_bw = 2039e9;
  spec->bw = 300e9;
  spec->lat = 0.5e-6;
  spec->node_bw = 8 * 200e9 / 8;
  spec->node_lat = 1e-6;
  spec->gpu_sms = 108;
  spec->gpu_comm_sms = NCCL_DGX_SMS;
  spec->gpu_gemm_eff = CUBLAS_GEMM_EFF;
  spec->gpu_l2_bw = A100_L2_BW;
  spec->gpu_launch = 7e-6;
  spec->bw_eff = 230.0 / 300;
  spec->node_bw_eff = 24 / 25.0;
  spec->pcie_bw = PCIE4_X16;
}


/* ---- today's GPU systems (issue 50): every figure's source is in platforms/README.md ---- */

/* NCCL's model of what a link carries (src/graph/topo.h): 20.6 GB/s per Hopper NVLink
 * (SM90_NVLINK_BW) of NVLink4's 25 GB/s per direction, 40.1 per Blackwell NVLink
 * (SM100_NVLINK_BW) of NVLink5's 50. */
#define NVLINK4_EFF 0.824 /* 20.6 / 25 */
#define NVLINK5_EFF 0.802 /* 40.1 / 50 */

/* The GEMM main loop's share of an SM's peak, fitted on one public benchmark per generation:
 * Stas Bekman's "Maximum Achievable Matmul FLOPS" table (github.com/stas00/ml-engineering,
 * compute/accelerator/README.md): H100 SXM BF16 794.5 Tflop/s at 2048 x 2048 x 13312 and FP8
 * 1402.6 at 1024 x 9216 x 14336 (Hopper's FP8 main loop sustains less of its peak, so fp8 has
 * its own); B200 BF16 1745.0 at 1792 x 16128 x 3072; GB200 BF16 1822.0 at 4096 x 9728 x 2048.
 * Fitted with this file's other figures by bisection, to 4 digits. */
#define H100_GEMM_EFF 0.8714
#define H100_FP8_EFF "0.7584"
#define B200_GEMM_EFF 0.8128
#define GB200_GEMM_EFF 0.7660

/* What a STREAM kernel reaches of nominal HBM bandwidth: 2.97 of the H100 SXM's 3.35 TB/s
 * (Azure's BabelStream triad on ND H100 v5, github.com/Azure/AI-benchmarking-guide). The
 * Blackwell presets take the same share (ASSUMPTION: no public measurement found). */
#define HBM_EFF (2.97 / 3.35)

/* A two-level non-blocking InfiniBand fat tree takes three switch ports per endpoint port (a
 * leaf port down, a leaf port up, a spine port); NVIDIA's Quantum-2 QM9700 (64 ports of 400
 * Gb/s) draws 747 W typical with passive cables (its datasheet): 35 W per 400 Gb/s endpoint
 * port, 70 W per 800 Gb/s one (ASSUMPTION: the same energy per bit). */
#define IB_PORT_W(gbps) (3 * 747.0 / 64 * (gbps) / 400)

/* A GPU node of today: 8 GPUs per DGX, NVLink through NVSwitch, 8 NICs of `nic_gbps`; the
 * node's power beyond its GPUs (system maximum minus the GPUs' limits) shared per GPU, idle at
 * half of it (ASSUMPTION), and the GPU idle at a tenth of its limit (ASSUMPTION). */
static void fill_dgx_today(size_t hosts, size_t per_node, size_t default_nodes, platform_spec *spec)
{
  fill_gpu_nodes(hosts, per_node, default_nodes, spec);
  spec->lat = 0.5e-6;
  spec->node_lat = 1e-6;
  spec->gpu_comm_sms = NCCL_DGX_SMS;
  spec->node_bw_eff = 24 / 25.0;
  spec->pcie_bw = PCIE5_X16;
}

void platform_power_fill(platform_spec *spec, double gpu_max_w, double gpu_min_w, double node_w_per_gpu,
                         double fabric_w)
{
  spec->gpu_max_w = gpu_max_w;
  spec->gpu_min_w = gpu_min_w;
  spec->gpu_idle_w = gpu_max_w / 10;
  spec->rest_busy_w = node_w_per_gpu - gpu_max_w;
  spec->rest_idle_w = spec->rest_busy_w / 2;
  spec->node_link_w = fabric_w;
}

int platform_power_parse(const char *text, platform_spec *spec)
{
  double w[5] = {0, 0, 0, 0, 0};
  int n = 0, used = 0;
  const char *p = text;
  while (n < 5 && sscanf(p, "%lf%n", &w[n], &used) == 1 && w[n] >= 0 && isfinite(w[n])) {
    p += used;
    n++;
    if (*p != ',')
      break;
    p++;
  }
  double idle = n == 5 ? w[4] : w[0] / 10;
  /* the lowest state must run above idle: its speed share ((MIN - idle) / (MAX - idle))^(1/3) */
  if (*p || n < 3 || !(w[0] > 0) || w[1] > w[0] || w[2] < w[0] || !(idle < w[1]))
    return -1;
  platform_power_fill(spec, w[0], w[1], w[2], w[3]);
  spec->gpu_idle_w = idle;
  return 0;
}

static void fill_power(platform_spec *spec, double gpu_max, double gpu_min, double node_max_w, double node_gpus,
                       double nic_gbps, double nics)
{
  platform_power_fill(spec, gpu_max, gpu_min, node_max_w / node_gpus, nics * IB_PORT_W(nic_gbps));
}

/* NVIDIA DGX H100: 8 H100 SXM5 (989.5e12 flop/s dense BF16, 132 SMs, 3.35 TB/s HBM3, NVLink4
 * 900 GB/s both ways through NVSwitch), 8 ConnectX-7 of 400 Gb/s, 10.2 kW at most; 8 nodes
 * by default. Kernel launch 7 us: Azure's 1024^3 FP8 GEMM takes 7.8 us (274.1 Tflop/s). */
static void fill_dgx_h100(size_t hosts, platform_spec *spec)
{
  fill_dgx_today(hosts, 8, 8, spec);
  spec->speed = 989.5e12;
  spec->gpu_peaks = "fp32:67e12,tf32:494.5e12,fp16:989.5e12,bf16:989.5e12,fp8:1979e12:" H100_FP8_EFF;
  spec->mem_bw = 3.35e12 * HBM_EFF;
  spec->gpu_sms = 132;
  spec->gpu_gemm_eff = H100_GEMM_EFF;
  spec->gpu_launch = 7e-6;
  spec->bw = 18 * 25e9;
  spec->bw_eff = NVLINK4_EFF;
  spec->node_bw = 8 * 400e9 / 8;
  fill_power(spec, 700, 200, 10200, 8, 400, 8);
}

/* NVIDIA DGX B200: 8 B200 (2.25e15 flop/s dense BF16, 148 SMs, 8 TB/s HBM3e, NVLink5 1.8 TB/s
 * both ways), 8 ConnectX-7 of 400 Gb/s, 14.3 kW at most; 8 nodes by default. Kernel launch
 * 4 us: Azure's 1024^3 FP8 GEMM on a GB200 takes 4.4 us (489.2 Tflop/s). */
static void fill_dgx_b200(size_t hosts, platform_spec *spec)
{
  fill_dgx_today(hosts, 8, 8, spec);
  spec->speed = 2.25e15;
  spec->gpu_peaks = "fp32:75e12,tf32:1.125e15,fp16:2.25e15,bf16:2.25e15,fp8:4.5e15";
  spec->mem_bw = 8e12 * HBM_EFF;
  spec->gpu_sms = 148;
  spec->gpu_gemm_eff = B200_GEMM_EFF;
  spec->gpu_launch = 4e-6;
  spec->bw = 18 * 50e9;
  spec->bw_eff = NVLINK5_EFF;
  spec->node_bw = 8 * 400e9 / 8;
  fill_power(spec, 1000, 300, 14300, 8, 400, 8);
}

/* NVIDIA GB200 NVL72: 72 Blackwell GPUs (2.5e15 flop/s dense BF16, 8 TB/s HBM3e; 148 SMs as the
 * B200, ASSUMPTION) in one NVLink5 domain (1.8 TB/s per GPU both ways, non-blocking), racks
 * joined by one 800 Gb/s NIC per GPU (ConnectX-8, ASSUMPTION); a GPU's limit 1,200 W and a rack
 * about 120 kW (ASSUMPTIONS: commonly reported, not in NVIDIA's datasheet); 1 rack by default. A GPU
 * reaches its Grace CPU over NVLink-C2C, 900 GB/s both ways (NVIDIA's GB200 NVL72 page). */
static void fill_gb200_nvl72(size_t hosts, platform_spec *spec)
{
  fill_dgx_today(hosts, 72, 1, spec);
  spec->speed = 2.5e15;
  spec->gpu_peaks = "fp32:80e12,tf32:1.25e15,fp16:2.5e15,bf16:2.5e15,fp8:5e15";
  spec->mem_bw = 8e12 * HBM_EFF;
  spec->gpu_sms = 148;
  spec->gpu_gemm_eff = GB200_GEMM_EFF;
  spec->gpu_launch = 4e-6;
  spec->bw = 18 * 50e9;
  spec->bw_eff = NVLINK5_EFF;
  spec->node_bw = 72 * 800e9 / 8;
  spec->pcie_bw = 900e9 / 2;
  fill_power(spec, 1200, 400, 120000, 72, 800, 72);
}

static const preset presets[] = {
    {"distbelief-2012",
     "Dean'12 CPU cluster: 16-core 20.8 Gflop/s/core machines on Google's Saturn fabric (Jupiter "
     "Rising): 10 GbE, racks of 20 with 4 x 10G uplinks (5:1), non-blocking above, 50 us links, "
     "LV08 (TCP/Ethernet); 1,280 hosts by default",
     fill_distbelief_2012},
    {"gpu-2012",
     "Dean'12 GPU baseline: one 1,331 Gflop/s GPU host (a 2012 Tesla M2090, fp32 peak); more "
     "hosts form a 1 GbE star",
     fill_gpu_2012},
    {"dgx2h",
     "Megatron-LM 2019: DGX-2H nodes of 16 V100 (125 Tflop/s fp16 peak, one host each), "
     "NVSwitch 150e9 B/s per GPU per direction, 8 x 100 Gb/s IB per node; 32 nodes by default",
     fill_dgx2h},
    {"selene",
     "PTD-P 2021: Selene nodes of 8 A100 (312 Tflop/s fp16 peak), NVSwitch 300e9 B/s per GPU per "
     "direction, 8 x 200 Gb/s HDR IB per node, non-blocking fat tree; 8 nodes by default",
     fill_selene},
    {"google-2004",
     "Google's cluster network of 2004 (Jupiter Rising): distbelief-2012's machines on 1 GbE, racks "
     "of 40 with 10:1 uplinks, 50 us links, LV08; 1,280 hosts by default",
     fill_google_2004},
    {"dgx-h100",
     "NVIDIA DGX H100: nodes of 8 H100 SXM (989.5 Tflop/s dense bf16, fp8 too), NVLink4 through NVSwitch, 8 x 400 "
     "Gb/s NDR per node, non-blocking fabric, power figures; 8 nodes by default",
     fill_dgx_h100},
    {"dgx-b200",
     "NVIDIA DGX B200: nodes of 8 B200 (2.25 Pflop/s dense bf16, fp8 too), NVLink5, 8 x 400 Gb/s per node, power "
     "figures; 8 nodes by default",
     fill_dgx_b200},
    {"gb200-nvl72",
     "NVIDIA GB200 NVL72: racks of 72 Blackwell GPUs (2.5 Pflop/s dense bf16, fp8 too) in one NVLink5 domain, "
     "joined by 800 Gb/s per GPU, power figures; 1 rack by default",
     fill_gb200_nvl72},
};

int platform_preset(const char *name, size_t hosts, platform_spec *spec)
{
  for (size_t i = 0; name && i < sizeof presets / sizeof *presets; i++)
    if (strcmp(name, presets[i].name) == 0) {
      memset(spec, 0, sizeof *spec);
      presets[i].fill(hosts, spec);
      return 0;
    }
  return -1;
}

const char *platform_preset_at(size_t i, const char **description)
{
  if (i >= sizeof presets / sizeof *presets)
    return NULL;
  if (description)
    *description = presets[i].description;
  return presets[i].name;
}

