# Assembles build/sdk (bin, lib, include, enable.sh) and the install/package rules.
# (Filled in by the SDK work; see README "Building your own program".)
