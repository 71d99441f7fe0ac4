// Each `lowbit` subcommand lives in its own file and registers itself here:
//   const CommandRegistration run_command{"run", "generate text", setup_run};
// (in the file's unnamed namespace, named after the command: the tools build
// in unity batches, several files in one translation unit).
// setup adds the subcommand's options to its CLI11 App and returns the function
// that runs it (returning the process exit code).
#pragma once

// App.hpp, not CLI.hpp: the commands add options; only main.cpp, which runs
// the App, needs the formatter and config reader CLI.hpp adds (compiled in
// every file they cost ~3 s of CPU each).
#include <CLI/App.hpp>
#include <functional>
#include <string>
#include <vector>

namespace lowbit::tools {

using CommandMain = std::function<int()>;
using CommandSetup = std::function<CommandMain(CLI::App&)>;

struct Command {
  std::string name;
  std::string help;
  CommandSetup setup;
};

std::vector<Command>& command_registry();

struct CommandRegistration {
  CommandRegistration(std::string name, std::string help, CommandSetup setup) {
    command_registry().push_back({std::move(name), std::move(help), std::move(setup)});
  }
};

}  // namespace lowbit::tools
