// Which piece a run is (--shard, every scheduler variable), the fixed ranges, piece names and the merge checks.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>

#include "kiln/scale.h"

namespace kiln {
namespace {

ShardEnvLookup env_of(std::map<std::string, std::string> vars) {
  return [vars = std::move(vars)](const char* name) -> const char* {
    const auto it = vars.find(name);
    return it == vars.end() ? nullptr : it->second.c_str();
  };
}

Shard resolved(std::map<std::string, std::string> vars, ShardSettings settings = {}) {
  auto shard = shard_resolve(settings, env_of(std::move(vars)));
  EXPECT_TRUE(shard.is_ok()) << shard.status().message();
  return shard.is_ok() ? shard.value() : Shard{};
}

std::string resolve_error(std::map<std::string, std::string> vars, ShardSettings settings = {}) {
  auto shard = shard_resolve(settings, env_of(std::move(vars)));
  EXPECT_FALSE(shard.is_ok());
  return shard.is_ok() ? "" : shard.status().message();
}

TEST(Shard, FlagGivesIndexAndCount) {
  const Shard s = resolved({}, {.shard = "2/4"});
  EXPECT_EQ(s.index, 2);
  EXPECT_EQ(s.count, 4);
  EXPECT_EQ(s.source, "--shard 2/4");
  EXPECT_TRUE(s.is_piece());
  EXPECT_TRUE(resolved({}, {.shard = "0/1"}).is_piece());
}

TEST(Shard, FlagWinsOverTheEnvironmentAndNoneIsTheWholeJob) {
  EXPECT_EQ(resolved({{"SLURM_ARRAY_TASK_ID", "3"}, {"SLURM_ARRAY_TASK_COUNT", "8"}}, {.shard = "1/2"}).count, 2);
  EXPECT_FALSE(resolved({{"SLURM_ARRAY_TASK_ID", "3"}, {"SLURM_ARRAY_TASK_COUNT", "8"}}, {.shard = "none"}).is_piece());
  EXPECT_FALSE(resolved({}).is_piece());
}

TEST(Shard, BadFlagsAreRefused) {
  for (const char* text : {"4/4", "-1/4", "1/0", "1", "a/b", "1/4x", "", "1//4"}) {
    EXPECT_NE(resolve_error({}, {.shard = text}), "") << text;
  }
}

TEST(Shard, SlurmArrayWithCount) {
  const Shard s = resolved({{"SLURM_ARRAY_TASK_ID", "3"}, {"SLURM_ARRAY_TASK_COUNT", "4"},
                            {"SLURM_ARRAY_TASK_MIN", "0"}, {"SLURM_ARRAY_TASK_MAX", "3"}});
  EXPECT_EQ(s.index, 3);
  EXPECT_EQ(s.count, 4);
  EXPECT_NE(s.source.find("SLURM_ARRAY_TASK_ID=3"), std::string::npos) << s.source;
}

TEST(Shard, SlurmArrayStartingAtOneWithAStep) {
  // --array=1-7:2 -> tasks 1, 3, 5, 7
  const auto env = [](const char* id) {
    return std::map<std::string, std::string>{{"SLURM_ARRAY_TASK_ID", id}, {"SLURM_ARRAY_TASK_MIN", "1"},
                                              {"SLURM_ARRAY_TASK_MAX", "7"}, {"SLURM_ARRAY_TASK_STEP", "2"},
                                              {"SLURM_ARRAY_TASK_COUNT", "4"}};
  };
  EXPECT_EQ(resolved(env("1")).index, 0);
  EXPECT_EQ(resolved(env("5")).index, 2);
  const Shard last = resolved(env("7"));
  EXPECT_EQ(last.index, 3);
  EXPECT_EQ(last.count, 4);
  EXPECT_NE(resolve_error(env("4")).find("step"), std::string::npos);
}

TEST(Shard, SlurmTaskIdIsThePieceWithAShardCount) {
  // sbatch --array=17 (a one-task array rerunning piece 17) with --shard-count 64.
  const Shard s = resolved({{"SLURM_ARRAY_TASK_ID", "17"}, {"SLURM_ARRAY_TASK_COUNT", "1"},
                            {"SLURM_ARRAY_TASK_MIN", "17"}, {"SLURM_ARRAY_TASK_MAX", "17"}},
                           {.shard = "auto", .shard_count = 64});
  EXPECT_EQ(s.index, 17);
  EXPECT_EQ(s.count, 64);
  EXPECT_EQ(s.source, "SLURM_ARRAY_TASK_ID=17 of --shard-count 64");
  EXPECT_NE(resolve_error({{"SLURM_ARRAY_TASK_ID", "64"}}, {.shard = "auto", .shard_count = 64}), "");
}

TEST(Shard, ASchedulerCountOfOneIsTheWholeJob) {
  EXPECT_FALSE(resolved({{"SLURM_ARRAY_TASK_ID", "3"}, {"SLURM_ARRAY_TASK_COUNT", "1"}, {"SLURM_ARRAY_TASK_MIN", "3"},
                         {"SLURM_ARRAY_TASK_MAX", "3"}}).is_piece());
  EXPECT_FALSE(resolved({{"OMPI_COMM_WORLD_RANK", "0"}, {"OMPI_COMM_WORLD_SIZE", "1"}}).is_piece());
  EXPECT_FALSE(resolved({{"PMI_RANK", "0"}, {"PMI_SIZE", "1"}}).is_piece());  // a plain srun step
  EXPECT_TRUE(resolved({}, {.shard = "0/1"}).is_piece());                     // asked for: a piece of one
  EXPECT_NE(resolve_error({}, {.shard = "0/2000000"}).find("at most"), std::string::npos);
}

TEST(Shard, SlurmArrayFromMinAndMaxOnly) {
  const Shard s = resolved({{"SLURM_ARRAY_TASK_ID", "12"}, {"SLURM_ARRAY_TASK_MIN", "10"}, {"SLURM_ARRAY_TASK_MAX", "15"}});
  EXPECT_EQ(s.index, 2);
  EXPECT_EQ(s.count, 6);
}

TEST(Shard, SlurmArrayGivenAsAListIsRefused) {
  // --array=1,5,10 as Slurm 22.05 describes it (seen on the test cluster): count 3, step 1, 1..10.
  const std::string error = resolve_error({{"SLURM_ARRAY_TASK_ID", "5"}, {"SLURM_ARRAY_TASK_MIN", "1"},
                                           {"SLURM_ARRAY_TASK_MAX", "10"}, {"SLURM_ARRAY_TASK_STEP", "1"},
                                           {"SLURM_ARRAY_TASK_COUNT", "3"}});
  EXPECT_NE(error.find("--shard I/N"), std::string::npos) << error;
  EXPECT_NE(resolve_error({{"SLURM_ARRAY_TASK_ID", "2"}}).find("SLURM_ARRAY_TASK_COUNT"), std::string::npos);
  EXPECT_NE(resolve_error({{"SLURM_ARRAY_TASK_ID", "x"}, {"SLURM_ARRAY_TASK_COUNT", "4"}}).find("not an integer"),
            std::string::npos);
}

TEST(Shard, KubernetesIndexNeedsTheCount) {
  const Shard s = resolved({{"JOB_COMPLETION_INDEX", "5"}}, {.shard = "auto", .shard_count = 8});
  EXPECT_EQ(s.index, 5);
  EXPECT_EQ(s.count, 8);
  EXPECT_NE(s.source.find("JOB_COMPLETION_INDEX=5"), std::string::npos);
  EXPECT_NE(resolve_error({{"JOB_COMPLETION_INDEX", "5"}}).find("--shard-count"), std::string::npos);
  EXPECT_NE(resolve_error({{"JOB_COMPLETION_INDEX", "8"}}, {.shard = "auto", .shard_count = 8}), "");
}

TEST(Shard, MpiRanks) {
  const Shard ompi = resolved({{"OMPI_COMM_WORLD_RANK", "1"}, {"OMPI_COMM_WORLD_SIZE", "3"}});
  EXPECT_EQ(ompi.index, 1);
  EXPECT_EQ(ompi.count, 3);
  EXPECT_NE(ompi.source.find("OMPI_COMM_WORLD_RANK=1"), std::string::npos);
  const Shard pmi = resolved({{"PMI_RANK", "0"}, {"PMI_SIZE", "2"}});
  EXPECT_EQ(pmi.index, 0);
  EXPECT_EQ(pmi.count, 2);
  EXPECT_NE(resolve_error({{"PMI_RANK", "0"}}).find("PMI_SIZE"), std::string::npos);
  EXPECT_NE(resolve_error({{"PMI_RANK", "2"}, {"PMI_SIZE", "2"}}), "");
}

TEST(Shard, SchedulersAreAskedInOrder) {
  // Slurm before Kubernetes before Open MPI before PMI.
  const Shard s = resolved({{"SLURM_ARRAY_TASK_ID", "1"}, {"SLURM_ARRAY_TASK_COUNT", "2"}, {"PMI_RANK", "0"},
                            {"PMI_SIZE", "5"}, {"OMPI_COMM_WORLD_RANK", "0"}, {"OMPI_COMM_WORLD_SIZE", "7"}});
  EXPECT_EQ(s.count, 2);
  EXPECT_EQ(resolved({{"OMPI_COMM_WORLD_RANK", "0"}, {"OMPI_COMM_WORLD_SIZE", "7"}, {"PMI_RANK", "0"},
                      {"PMI_SIZE", "5"}}).count, 7);
}

TEST(ShardRange, PiecesCoverTheJobExactlyOnce) {
  for (const int64_t total : {0, 1, 3, 7, 100, 85887}) {
    for (const int64_t count : {1, 2, 3, 4, 7, 64, 101}) {
      int64_t next = 0;
      for (int64_t i = 0; i < count; ++i) {
        const IndexRange r = shard_range(i, count, total);
        EXPECT_EQ(r.first, next) << total << " " << count << " " << i;
        EXPECT_GE(r.count, total / count);
        EXPECT_LE(r.count, total / count + 1);
        next = r.end();
      }
      EXPECT_EQ(next, total);
    }
  }
  // No overflow for a huge job.
  const IndexRange last = shard_range(999, 1000, int64_t{1} << 60);
  EXPECT_EQ(last.end(), int64_t{1} << 60);
}

TEST(PieceNames, RoundTrip) {
  const std::string path = piece_path("out/btc.h5", Shard{2, 16, ""});
  EXPECT_EQ(path, "out/btc.shard-00002-of-00016.h5");
  PieceName name;
  ASSERT_TRUE(piece_name_parse(path, &name));
  EXPECT_EQ(name.stem, "btc");
  EXPECT_EQ(name.extension, ".h5");
  EXPECT_EQ(name.index, 2);
  EXPECT_EQ(name.count, 16);
  EXPECT_FALSE(piece_name_parse("out/btc.shard-2-of-16.h5", &name));
  EXPECT_FALSE(piece_name_parse("out/btc.shard-00016-of-00016.h5", &name));
  EXPECT_FALSE(piece_name_parse("out/btc.h5", &name));
  EXPECT_FALSE(piece_name_parse("out/btc.shard-00001-of-00016.h5.tmp", &name));
}

TEST(PieceNames, FindListsPieceFilesOnly) {
  const auto dir = std::filesystem::temp_directory_path() / ("kiln_pieces_" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  for (const char* name : {"a.shard-00001-of-00002.h5", "a.shard-00000-of-00002.h5", "a.h5",
                           "a.shard-00000-of-00002.h5.tmp", "b.shard-00000-of-00001.h5"}) {
    std::ofstream(dir / name) << "x";
  }
  std::filesystem::create_directories(dir / "a.shard-00000-of-00002.h5.parts");
  const auto found = pieces_find(dir.string());
  ASSERT_EQ(found.size(), 3u);
  EXPECT_EQ(found[0].stem, "a");
  EXPECT_EQ(found[0].index, 0);
  EXPECT_EQ(found[1].index, 1);
  EXPECT_EQ(found[2].stem, "b");
  std::filesystem::remove_all(dir);
}

PieceFacts piece(int64_t index, int64_t count, int64_t total, bool complete = true) {
  const IndexRange r = shard_range(index, count, total);
  return PieceFacts{"p" + std::to_string(index), index, count, r.first, r.count, total, complete, {}};
}

bool any_contains(const std::vector<std::string>& lines, const std::string& text) {
  for (const auto& line : lines) {
    if (line.find(text) != std::string::npos) return true;
  }
  return false;
}

struct AppPiece {  // an application's piece as the merges hold them
  PieceFacts facts;
};

TEST(PiecesCheck, ACompleteSetPassesInAnyOrderAndSortsIntoTheJobsOrder) {
  std::vector<AppPiece> pieces = {{piece(2, 3, 10)}, {piece(0, 3, 10)}, {piece(1, 3, 10)}};
  EXPECT_TRUE(pieces_check(pieces_facts(pieces)).empty());
  pieces.push_back({piece_facts_from_name("unknown.h5")});  // unreadable and unnamed: index -1, first
  pieces_sort(&pieces);
  EXPECT_EQ(pieces[0].facts.shard_index, -1);
  EXPECT_EQ(pieces[1].facts.shard_index, 0);
  EXPECT_EQ(pieces[3].facts.shard_index, 2);
}

TEST(PiecesCheck, EveryProblemIsListed) {
  std::vector<PieceFacts> pieces = {piece(0, 4, 100), piece(1, 4, 100, false), piece(1, 4, 100), piece(3, 5, 100)};
  pieces.push_back(piece(0, 4, 100));
  pieces.back().path = "shifted";
  pieces.back().shard_index = 3;  // holds piece 0's range under piece 3's name
  pieces.push_back(piece(0, 4, 99));
  pieces.back().path = "other-job";
  pieces.push_back(piece(0, 4, 100));
  pieces.back().path = "damaged";
  pieces.back().problems.push_back("is damaged");
  const auto problems = pieces_check(pieces);
  EXPECT_TRUE(any_contains(problems, "p1: incomplete")) << problems.size();
  EXPECT_TRUE(any_contains(problems, "more than once"));
  EXPECT_TRUE(any_contains(problems, "p3: piece of 5"));
  EXPECT_TRUE(any_contains(problems, "shifted: holds items 0..24, piece 3 of 4 is 75..99"));
  EXPECT_TRUE(any_contains(problems, "other-job: its job has 99 items"));
  EXPECT_TRUE(any_contains(problems, "damaged: is damaged"));
  EXPECT_TRUE(any_contains(problems, "piece 2 of 4 (items 50..74) is missing"));
}

}  // namespace
}  // namespace kiln
