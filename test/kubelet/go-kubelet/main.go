// SPDX-License-Identifier: GPL-2.0-or-later

// go-kubelet: a test kubelet for pkg/kubelet on grpc-go itself (Debian's golang-google-grpc-dev),
// the library every kubelet dials device plugins with. Its message and service stubs
// (package nodeprobe/deviceplugin) are generated at test time from pkg/kubelet's .proto files
// by test/kubelet/build-go-kubelet; nothing is fetched. It also plays the kubelet for a DRA
// driver (dra.go), on upstream's .proto files.
//
// Every command dials a plugin socket the way a kubelet does; --dial chooses which kubelet:
//
//	1.25     kubelet v1.25 (pkg/kubelet/cm/devicemanager/endpoint.go): grpc.DialContext with the
//	         socket's path as target, WithInsecure, WithBlock and a unix WithContextDialer; grpc-go
//	         then sends that path as the HTTP/2 :authority (the default)
//	current  today's kubelet (pkg/kubelet/cm/devicemanager/plugin/v1beta1/client.go, dial):
//	         the same plus grpc.WithAuthority("localhost")
//
// Commands (JSON on stdout, one line each; proto field names as in the .proto):
//
//	all SOCK IDS           every DevicePlugin RPC once: GetDevicePluginOptions, ListAndWatch (its
//	                       first message), GetPreferredAllocation (of IDS, comma-separated, size
//	                       1), Allocate and PreStartContainer (of IDS)
//	call SOCK METHOD [JSON] one unary call; a gRPC error prints {"code": NAME, "details": ...}
//	watch SOCK COUNT        ListAndWatch: print COUNT messages
//	serve DIR               play kubelet.sock: Registration.Register appends each request to
//	                        DIR/registrations.jsonl, then, as a kubelet does, dials the plugin's
//	                        endpoint, calls GetDevicePluginOptions and keeps ListAndWatch open,
//	                        appending {"resource": R, "devices": N} to DIR/lists.jsonl for each
//	                        message; until SIGTERM
//
// DRA commands (dra.go; the kubelet 1.34's two dials, whatever --dial says):
//
//	dra-register REGDIR [MSG]       the plugin watcher: wait for a socket under REGDIR, GetInfo,
//	                                validate, NotifyRegistrationStatus (refused with MSG if
//	                                given); prints the PluginInfo with registration_socket,
//	                                chosen (the service) and error; 1 if refused unasked
//	dra-prepare EP VERSION CLAIMS   NodePrepareResources on endpoint EP, VERSION v1 or v1beta1,
//	                                CLAIMS a JSON list of {namespace, uid, name}; prints the
//	                                answer or {"code": NAME, "details": ...}
//	dra-unprepare EP VERSION CLAIMS NodeUnprepareResources, the same way
//	dra-kubelet REGDIR CLAIMS       dra-register, then over one connection to the endpoint
//	                                Prepare and Unprepare of CLAIMS in v1, then in v1beta1: a
//	                                line each, "register ...", "v1 NodePrepareResources ..."
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/encoding"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"

	pb "nodeprobe/deviceplugin"
)

// protoCodec replaces grpc-go's "proto" codec: Debian's grpc-go 1.33 marshals with
// github.com/golang/protobuf 1.3 (golang-github-golang-protobuf-1-3-dev), which cannot handle the
// google.golang.org/protobuf messages protoc-gen-go generates. The bytes on the wire are the same.
type protoCodec struct{}

func (protoCodec) Marshal(v interface{}) ([]byte, error) { return proto.Marshal(v.(proto.Message)) }
func (protoCodec) Unmarshal(b []byte, v interface{}) error {
	return proto.Unmarshal(b, v.(proto.Message))
}
func (protoCodec) Name() string { return "proto" }

func init() { encoding.RegisterCodec(protoCodec{}) }

var dialMode = flag.String("dial", "1.25", "which kubelet's dial: 1.25 or current")

// dialPath connects to the socket at path sock, blocking for at most 10 s, as kubelet 1.25's
// device manager did and as the plugin watcher still does (pkg/kubelet/pluginmanager/
// operationexecutor/operation_generator.go, dial): the path as target, WithInsecure, WithBlock,
// a unix WithContextDialer; opts are added.
func dialPath(ctx context.Context, sock string, opts ...grpc.DialOption) (*grpc.ClientConn, error) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	opts = append(opts, grpc.WithInsecure(), grpc.WithBlock(),
		grpc.WithContextDialer(func(ctx context.Context, addr string) (net.Conn, error) {
			return (&net.Dialer{}).DialContext(ctx, "unix", addr)
		}))
	return grpc.DialContext(ctx, sock, opts...)
}

// dial connects to a plugin socket as a kubelet does (see the package comment).
func dial(ctx context.Context, sock string) (*grpc.ClientConn, error) {
	switch *dialMode {
	case "1.25":
		return dialPath(ctx, sock)
	case "current":
		return dialPath(ctx, sock, grpc.WithAuthority("localhost"))
	}
	return nil, fmt.Errorf("--dial %q: want 1.25 or current", *dialMode)
}

// withPlugin dials sock (dial) and runs f with the client, all within 20 s; 1 if the dial failed.
func withPlugin(sock string, f func(ctx context.Context, c pb.DevicePluginClient) int) int {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	conn, err := dial(ctx, sock)
	if err != nil {
		fmt.Fprintf(os.Stderr, "go-kubelet: dial %s: %v\n", sock, err)
		return 1
	}
	defer conn.Close()
	return f(ctx, pb.NewDevicePluginClient(conn))
}

// js prints m as one line of JSON with sorted keys.
func js(m proto.Message) string {
	b, err := protojson.MarshalOptions{UseProtoNames: true}.Marshal(m)
	if err != nil {
		return fmt.Sprintf(`{"marshal error": %q}`, err.Error())
	}
	var v interface{}
	if err := json.Unmarshal(b, &v); err != nil {
		return string(b)
	}
	out, _ := json.Marshal(v)
	return string(out)
}

func errJSON(err error) string {
	s, _ := status.FromError(err)
	out, _ := json.Marshal(map[string]string{"code": s.Code().String(), "details": s.Message()})
	return string(out)
}

func unary(ctx context.Context, c pb.DevicePluginClient, method, arg string) (proto.Message, error) {
	if arg == "" {
		arg = "{}"
	}
	var req, resp proto.Message
	var call func() error
	switch method {
	case "GetDevicePluginOptions":
		r := &pb.Empty{}
		req, call = r, func() (err error) { resp, err = c.GetDevicePluginOptions(ctx, r); return }
	case "GetPreferredAllocation":
		r := &pb.PreferredAllocationRequest{}
		req, call = r, func() (err error) { resp, err = c.GetPreferredAllocation(ctx, r); return }
	case "Allocate":
		r := &pb.AllocateRequest{}
		req, call = r, func() (err error) { resp, err = c.Allocate(ctx, r); return }
	case "PreStartContainer":
		r := &pb.PreStartContainerRequest{}
		req, call = r, func() (err error) { resp, err = c.PreStartContainer(ctx, r); return }
	default:
		return nil, fmt.Errorf("unknown method %q", method)
	}
	if err := protojson.Unmarshal([]byte(arg), req); err != nil {
		return nil, fmt.Errorf("%s request: %v", method, err)
	}
	err := call() // before resp is read: Go leaves the order of a return list's operands open
	return resp, err
}

func cmdCall(args []string) int {
	if len(args) < 2 {
		return usage()
	}
	arg := ""
	if len(args) > 2 {
		arg = args[2]
	}
	return withPlugin(args[0], func(ctx context.Context, c pb.DevicePluginClient) int {
		resp, err := unary(ctx, c, args[1], arg)
		if err != nil {
			if _, ok := status.FromError(err); !ok {
				fmt.Fprintf(os.Stderr, "go-kubelet: %v\n", err)
				return 1
			}
			fmt.Println(errJSON(err))
			return 0
		}
		fmt.Println(js(resp))
		return 0
	})
}

func cmdWatch(args []string) int {
	if len(args) < 2 {
		return usage()
	}
	count, err := strconv.Atoi(args[1])
	if err != nil {
		return usage()
	}
	return withPlugin(args[0], func(ctx context.Context, c pb.DevicePluginClient) int {
		st, err := c.ListAndWatch(ctx, &pb.Empty{})
		for n := 0; err == nil && n < count; n++ {
			var m *pb.ListAndWatchResponse
			if m, err = st.Recv(); err == nil {
				fmt.Println(js(m))
			}
		}
		if err != nil {
			fmt.Fprintf(os.Stderr, "go-kubelet: ListAndWatch: %s\n", errJSON(err))
			return 1
		}
		return 0
	})
}

func cmdAll(args []string) int {
	if len(args) < 2 {
		return usage()
	}
	return withPlugin(args[0], func(ctx context.Context, c pb.DevicePluginClient) int {
		ids := strings.Split(args[1], ",")
		idsJSON, _ := json.Marshal(ids)
		rc := 0
		show := func(name string, m proto.Message, err error) {
			if err != nil {
				fmt.Printf("%s %s\n", name, errJSON(err))
				rc = 1
				return
			}
			fmt.Printf("%s %s\n", name, js(m))
		}
		m, err := unary(ctx, c, "GetDevicePluginOptions", "")
		show("GetDevicePluginOptions", m, err)
		st, err := c.ListAndWatch(ctx, &pb.Empty{})
		var l *pb.ListAndWatchResponse
		if err == nil {
			l, err = st.Recv()
		}
		show("ListAndWatch", l, err)
		m, err = unary(ctx, c, "GetPreferredAllocation",
			fmt.Sprintf(`{"container_requests":[{"available_deviceIDs":%s,"allocation_size":1}]}`, idsJSON))
		show("GetPreferredAllocation", m, err)
		m, err = unary(ctx, c, "Allocate", fmt.Sprintf(`{"container_requests":[{"devices_ids":%s}]}`, idsJSON))
		show("Allocate", m, err)
		m, err = unary(ctx, c, "PreStartContainer", fmt.Sprintf(`{"devices_ids":%s}`, idsJSON))
		show("PreStartContainer", m, err)
		return rc
	})
}

// registration plays kubelet.sock: it records each request, then connects back as a kubelet.
type registration struct {
	pb.UnimplementedRegistrationServer
	dir string
	mu  sync.Mutex
}

func (r *registration) appendLine(file, line string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	f, err := os.OpenFile(filepath.Join(r.dir, file), os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		fmt.Fprintf(os.Stderr, "go-kubelet: %v\n", err)
		return
	}
	defer f.Close()
	fmt.Fprintln(f, line)
}

func (r *registration) Register(ctx context.Context, req *pb.RegisterRequest) (*pb.Empty, error) {
	r.appendLine("registrations.jsonl", js(req))
	go r.connect(req.ResourceName, filepath.Join(r.dir, req.Endpoint))
	return &pb.Empty{}, nil
}

// connect: what the kubelet's device manager does after a Register (client.go Connect, Run).
func (r *registration) connect(resource, sock string) {
	note := func(k string, v interface{}) {
		out, _ := json.Marshal(map[string]interface{}{"resource": resource, k: v})
		r.appendLine("lists.jsonl", string(out))
	}
	conn, err := dial(context.Background(), sock)
	if err != nil {
		note("error", err.Error())
		return
	}
	defer conn.Close()
	c := pb.NewDevicePluginClient(conn)
	if _, err := c.GetDevicePluginOptions(context.Background(), &pb.Empty{}); err != nil {
		note("error", "GetDevicePluginOptions: "+errJSON(err))
		return
	}
	st, err := c.ListAndWatch(context.Background(), &pb.Empty{})
	for err == nil {
		var m *pb.ListAndWatchResponse
		if m, err = st.Recv(); err == nil {
			note("devices", len(m.Devices))
		}
	}
	if !errors.Is(err, io.EOF) {
		note("error", "ListAndWatch: "+errJSON(err))
	}
}

func cmdServe(args []string) int {
	if len(args) < 1 {
		return usage()
	}
	sock := filepath.Join(args[0], "kubelet.sock")
	os.Remove(sock)
	l, err := net.Listen("unix", sock)
	if err != nil {
		fmt.Fprintf(os.Stderr, "go-kubelet: %v\n", err)
		return 1
	}
	srv := grpc.NewServer()
	pb.RegisterRegistrationServer(srv, &registration{dir: args[0]})
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGTERM, syscall.SIGINT)
	go func() {
		<-sig
		srv.Stop()
	}()
	if err := srv.Serve(l); err != nil {
		fmt.Fprintf(os.Stderr, "go-kubelet: %v\n", err)
	}
	os.Remove(sock)
	return 0
}

func usage() int {
	fmt.Fprintln(os.Stderr, "usage: go-kubelet [--dial 1.25|current] all SOCK IDS | call SOCK METHOD [JSON] | watch SOCK COUNT | serve DIR\n"+
		"       go-kubelet dra-register REGDIR [MSG] | dra-prepare EP VERSION CLAIMS | dra-unprepare EP VERSION CLAIMS | dra-kubelet REGDIR CLAIMS")
	return 2
}

func main() {
	flag.Parse()
	cmds := map[string]func([]string) int{"all": cmdAll, "call": cmdCall, "watch": cmdWatch, "serve": cmdServe,
		"dra-register": cmdDRARegister, "dra-prepare": draOne("NodePrepareResources"),
		"dra-unprepare": draOne("NodeUnprepareResources"), "dra-kubelet": cmdDRAKubelet}
	args := flag.Args()
	if len(args) < 1 || cmds[args[0]] == nil {
		os.Exit(usage())
	}
	os.Exit(cmds[args[0]](args[1:]))
}
