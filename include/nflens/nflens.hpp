// SPDX-License-Identifier: MIT
#pragma once

/// @file
/// Umbrella header: everything nflens offers. Include the single headers to compile less.

#include <nflens/compare.hpp>
#include <nflens/diagnostic.hpp>
#include <nflens/format.hpp>
#include <nflens/graph.hpp>
#include <nflens/iptables.hpp>
#include <nflens/iptables_modules.hpp>
#include <nflens/net.hpp>
#include <nflens/source.hpp>
#include <nflens/version.hpp>
