package main

import (
	"github.com/spf13/cobra"

	"github.com/idemlint/idemlint/checks/asbuilt"
	"github.com/idemlint/idemlint/checks/config"
	"github.com/idemlint/idemlint/checks/lint"
	"github.com/idemlint/idemlint/checks/report"
)

func newGraphCmd() *cobra.Command {
	var format string
	var flags config.Flags
	cmd := &cobra.Command{
		Use:   "graph PATH...",
		Short: "Print every operation's chain with the key's fate at each hop",
		Long:  longHelp("graph"),
		Args:  cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return lint.WriteGraphs(cmd.OutOrStdout(), args, format, lint.Settings{Flags: flags, Notes: cmd.ErrOrStderr()})
		},
	}
	cmd.Flags().StringVarP(&format, "format", "f", "text", "output format: "+joinNames(report.GraphFormats))
	cmd.Flags().StringArrayVar(&flags.AsBuilt, "as-built", nil, "proxy and mesh configuration whose retries each hop is drawn with, as on check; repeatable")
	cmd.Flags().StringVar(&flags.Mesh, "mesh", "", "the mesh that carries hops no --as-built resource routes, as on check: none or istio")
	completeFlag(cmd, "mesh", string(asbuilt.NoMesh), string(asbuilt.IstioMesh))
	return cmd
}
