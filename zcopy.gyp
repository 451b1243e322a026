{
  "targets": [
    {
      "target_name": "zcopy",
      "conditions": [
        ["OS=='linux'", {
          "sources": [
            "src/addon.cc",
            "src/copy_range.cc",
            "src/descriptors.cc",
            "src/env_registry.cc",
            "src/errors.cc",
            "src/idle_priority.cc",
            "src/lane.cc",
            "src/lane_table.cc",
            "src/memory_trim.cc",
            "src/open_beneath.cc",
            "src/pending_changes.cc",
            "src/socket_cork.cc",
            "src/socket_room.cc",
            "src/probe.cc",
            "src/request_body.cc",
            "src/request_frame.cc",
            "src/request_head.cc",
            "src/request_head_binding.cc",
            "src/transfer.cc",
            "src/transfer_core.cc"
          ],
          "defines": [
            "NAPI_VERSION=8",
            "NAPI_DISABLE_CPP_EXCEPTIONS",
            "NODE_ADDON_API_DISABLE_DEPRECATED",
            "NODE_API_SWALLOW_UNTHROWABLE_EXCEPTIONS",
            "_FILE_OFFSET_BITS=64"
          ],
          "cflags_cc": ["-isystem", "<(module_root_dir)/<!(node -p \"require('node-addon-api').include_dir\")", "-std=c++17", "-ffunction-sections", "-Wall", "-Wextra", "-Wshadow", "-Wconversion", "-Wno-sign-conversion", "-fno-exceptions", "-fvisibility=hidden", "-fvisibility-inlines-hidden"],
          "ldflags": ["-Wl,--gc-sections", "-Wl,--as-needed"],
          "cflags_cc!": ["-fno-rtti"]
        }, {
          "type": "none"
        }]
      ]
    }
  ]
}
