// D-4 (DV-12): srun and salloc are wrappers with the value-taking options of Slurm 22.05, so the program they
// launch is what is judged (echo, reader, profiler or a run).
#include <gtest/gtest.h>

#include "kopt/shell.hpp"

namespace {

using kopt::CommandKind;
using kopt::command_kind;

const std::string kLine = R"('KERNEL_EVAL={"artifact":"k.py","latency_ms":0.1,"correct":true}')";

TEST(D4_SlurmWrappers, SrunCarriesTheProgramItLaunches) {
  EXPECT_EQ(command_kind("srun echo " + kLine), CommandKind::Echo);
  EXPECT_EQ(command_kind("srun -N1 -n 1 --gres=gpu:1 -p gpu echo " + kLine), CommandKind::Echo);
  EXPECT_EQ(command_kind("srun ./bench"), CommandKind::Run);
  EXPECT_EQ(command_kind("srun -p gpu --gres gpu:1 python3 bench.py"), CommandKind::Run);
  EXPECT_EQ(command_kind("srun -w n1 cat bench.log"), CommandKind::ReadBack);
  // a value option swallows its value: "-J cat" names the job, the program is ./bench
  EXPECT_EQ(command_kind("srun -J cat ./bench"), CommandKind::Run);
  EXPECT_EQ(command_kind("srun --job-name cat ./bench"), CommandKind::Run);
  // flags and optional-value options take nothing: "-l" and "--immediate" leave "cat" the program
  EXPECT_EQ(command_kind("srun -l --immediate cat log"), CommandKind::ReadBack);
  EXPECT_EQ(command_kind("srun -u --exclusive tail -n 3 log"), CommandKind::ReadBack);
  // attached forms are one token
  EXPECT_EQ(command_kind("srun -n2 -t10 --mem=4G --time=5 head log"), CommandKind::ReadBack);
  // `--` ends srun's options
  EXPECT_EQ(command_kind("srun -n 1 -- grep K log"), CommandKind::ReadBack);
  // wrappers chain both ways
  EXPECT_EQ(command_kind("timeout 600 srun -n1 env CUDA_VISIBLE_DEVICES=0 ./bench"), CommandKind::Run);
  EXPECT_EQ(command_kind("srun --export ALL env -u X grep K log"), CommandKind::ReadBack);
  // exact token only: a path to srun is a program like any other
  EXPECT_EQ(command_kind("/usr/bin/srun cat log"), CommandKind::Run);
}

TEST(D4_SlurmWrappers, SallocThenSrun) {
  EXPECT_EQ(command_kind("salloc -N1 --gres=gpu:1 srun -n1 ./bench"), CommandKind::Run);
  EXPECT_EQ(command_kind("salloc -N 1 -t 10 srun --ntasks 1 echo " + kLine), CommandKind::Echo);
  EXPECT_EQ(command_kind("salloc -p gpu -A proj srun cat bench.log"), CommandKind::ReadBack);
  EXPECT_EQ(command_kind("salloc --nice ./bench"), CommandKind::Run);
  // --uid is salloc's, not srun's; -F (nodefile) takes a value only for salloc
  EXPECT_EQ(command_kind("salloc --uid 1000 -F nodes.txt cat log"), CommandKind::ReadBack);
}

TEST(D4_SlurmWrappers, SbatchStaysARun) {
  EXPECT_EQ(command_kind("sbatch --wait -o out.log job.sh && cat out.log"), CommandKind::Run);
  EXPECT_EQ(command_kind("sbatch --wait --wrap 'python3 bench.py' -o o.log; tail -n 5 o.log"), CommandKind::Run);
  EXPECT_EQ(command_kind("cat out.log"), CommandKind::ReadBack);
}

TEST(E3_SlurmProfilers, ProfilerBehindSrunOrSalloc) {
  const std::vector<std::string> prof{"nsys", "ncu"};
  EXPECT_TRUE(kopt::matches_profile_command("srun nsys profile ./bench", prof));
  EXPECT_TRUE(kopt::matches_profile_command("srun -p gpu --gres gpu:1 -t 10 ncu --set full ./bench", prof));
  EXPECT_TRUE(kopt::matches_profile_command("salloc -N1 srun -n1 nsys profile -o r ./bench", prof));
  EXPECT_TRUE(kopt::matches_profile_command("srun -N1 --gres=gpu:1 -- nsys profile ./bench.sh", prof));
  EXPECT_FALSE(kopt::matches_profile_command("srun -J nsys ./bench", prof));  // the job's name, not the program
  EXPECT_FALSE(kopt::matches_profile_command("srun nsys --version", prof));
  EXPECT_FALSE(kopt::matches_profile_command("srun ./bench", prof));
  // sbatch stays an executor: its quoted --wrap script is scanned
  EXPECT_TRUE(kopt::matches_profile_command("sbatch --wait --wrap 'nsys profile ./bench'", prof));
}

}  // namespace

namespace {

TEST(H7_SlurmPath, TheLauncherAPointWasMeasuredThrough) {
  EXPECT_EQ(kopt::slurm_path("srun -p gpu python3 bench.py"), "srun");
  EXPECT_EQ(kopt::slurm_path("cd run && timeout 600 srun -n1 ./bench | tee log"), "srun");
  EXPECT_EQ(kopt::slurm_path("salloc -N1 srun ./bench"), "salloc");
  EXPECT_EQ(kopt::slurm_path("sbatch --wait -o out.log job.sh && cat out.log"), "sbatch");
  EXPECT_EQ(kopt::slurm_path("/usr/bin/sbatch --wait j.sh"), "sbatch");
  EXPECT_EQ(kopt::slurm_path("kopt-bench --ref r.pt --solution a.cu --inputs s.json --slurm '-p gpu'"),
            "kopt-bench --slurm");
  EXPECT_EQ(kopt::slurm_path("./build/kopt-bench --slurm=-pgpu --solution a.cu"), "kopt-bench --slurm");
  EXPECT_EQ(kopt::slurm_path("kopt-bench --ref r.pt --solution a.cu --inputs s.json"), "");
  EXPECT_EQ(kopt::slurm_path("python3 bench.py"), "");
  EXPECT_EQ(kopt::slurm_path("echo srun; ./bench"), "");
  EXPECT_EQ(kopt::slurm_path("sudo -u srun ./bench"), "");  // a value, not the launcher
  EXPECT_EQ(kopt::slurm_path("grep srun log"), "");
  EXPECT_EQ(kopt::slurm_path("ssh box 'srun ./bench'"), "");  // quoted: another machine's business
}

}  // namespace
