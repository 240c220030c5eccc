package hotspot

import (
	"errors"
	"strings"
	"testing"
)

func TestRequest(t *testing.T) {
	for _, tt := range []struct {
		op   string
		args []string
		want string
	}{
		{op: "jcmd", args: []string{"Compiler.perfmap"}, want: "1\x00jcmd\x00Compiler.perfmap\x00\x00\x00"},
		{op: "jcmd", args: []string{"VM.flags -all"}, want: "1\x00jcmd\x00VM.flags -all\x00\x00\x00"},
		{op: "properties", want: "1\x00properties\x00\x00\x00\x00"},
	} {
		if got := string(request(tt.op, tt.args...)); got != tt.want {
			t.Errorf("request(%q, %q): got %q, want %q", tt.op, tt.args, got, tt.want)
		}
	}
}

func TestParseReply(t *testing.T) {
	for _, tt := range []struct {
		name     string
		reply    string
		want     string
		wantKind error
		wantMsg  string
	}{
		{name: "output", reply: "0\nOpenJDK 64-Bit Server VM version 17\n", want: "OpenJDK 64-Bit Server VM version 17\n"},
		{name: "no output", reply: "0\n", want: ""},
		{name: "failed", reply: "-1\njava.lang.IllegalArgumentException: Unknown diagnostic command\n", wantKind: ErrCommand,
			wantMsg: "pid 7: the JVM answered status -1: java.lang.IllegalArgumentException: Unknown diagnostic command"},
		{name: "failed, no message", reply: "1\n", wantKind: ErrCommand, wantMsg: "status 1: no message"},
		{name: "bad version", reply: "101\n", wantKind: ErrProtocol, wantMsg: "protocol version 1"},
		{name: "empty", reply: "", wantKind: ErrProtocol, wantMsg: "closed the connection without a reply"},
		{name: "no newline", reply: "0", wantKind: ErrProtocol, wantMsg: "does not start with a status line"},
		{name: "not a number", reply: "HTTP/1.1 400\n", wantKind: ErrProtocol, wantMsg: `"HTTP/1.1 400\n"`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parseReply(7, []byte(tt.reply))
			if tt.wantKind == nil {
				if err != nil || got != tt.want {
					t.Errorf("got %q, %v; want %q", got, err, tt.want)
				}
				return
			}
			if !errors.Is(err, tt.wantKind) || !strings.Contains(err.Error(), tt.wantMsg) {
				t.Errorf("got %q, %v; want %v containing %q", got, err, tt.wantKind, tt.wantMsg)
			}
		})
	}
}

func TestParseStatus(t *testing.T) {
	const head = "Name:\tjava\nUmask:\t0022\nState:\tS (sleeping)\nTgid:\t4242\n"
	for _, tt := range []struct {
		name    string
		status  string
		want    target
		wantErr bool
	}{
		{
			name:   "host process",
			status: head + "NSpid:\t4242\nUid:\t1000\t1000\t1000\t1000\nGid:\t100\t100\t100\t100\nSigBlk:\t0\nSigIgn:\t0000000000000000\nSigCgt:\t2000000181005ccf\n",
			want:   target{nspid: 4242, uid: 1000, gid: 100, catches: true},
		},
		{
			name:   "in a container, effective ids differ",
			status: head + "NSpid:\t4242\t17\t1\nUid:\t0\t1001\t0\t1001\nGid:\t0\t50\t0\t50\nSigCgt:\t0000000000000004\n",
			want:   target{nspid: 1, uid: 1001, gid: 50, catches: true},
		},
		{
			name:   "SIGQUIT not caught (-Xrs)",
			status: head + "NSpid:\t4242\nUid:\t0\t0\t0\t0\nGid:\t0\t0\t0\t0\nSigCgt:\t2000000181005ccb\n",
			want:   target{nspid: 4242},
		},
		{
			name:   "old kernel without NSpid",
			status: head + "Uid:\t5\t5\t5\t5\nGid:\t6\t6\t6\t6\nSigCgt:\t4\n",
			want:   target{nspid: 4242, uid: 5, gid: 6, catches: true},
		},
		{name: "no SigCgt", status: head + "Uid:\t5\t5\t5\t5\nGid:\t6\t6\t6\t6\n", wantErr: true},
		{name: "bad Uid", status: head + "Uid:\tx\ty\nGid:\t6\t6\t6\t6\nSigCgt:\t4\n", wantErr: true},
		{name: "bad NSpid", status: head + "NSpid:\t-3\nUid:\t5\t5\t5\t5\nGid:\t6\t6\t6\t6\nSigCgt:\t4\n", wantErr: true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got := target{nspid: 4242}
			err := parseStatus([]byte(tt.status), &got)
			if (err != nil) != tt.wantErr {
				t.Fatalf("got error %v, want error %v", err, tt.wantErr)
			}
			if err == nil && got != tt.want {
				t.Errorf("got %+v, want %+v", got, tt.want)
			}
		})
	}
}

func TestMapsLibJVM(t *testing.T) {
	for _, tt := range []struct {
		name, maps string
		want       bool
	}{
		{name: "jdk", want: true, maps: "7f00-7f10 r-xp 00000000 08:01 123 /usr/lib/jvm/java-17-openjdk-amd64/lib/server/libjvm.so\n"},
		{name: "deleted", want: true, maps: "7f00-7f10 r-xp 00000000 08:01 123 /opt/jdk/lib/server/libjvm.so (deleted)\n"},
		{name: "a path with a space", want: true, maps: "7f00-7f10 r-xp 00000000 08:01 123 /opt/my jdk/lib/server/libjvm.so\n"},
		{name: "not a jvm", maps: "55d0-55e0 r-xp 00000000 08:01 9 /usr/bin/sleep\n7f00-7f10 r-xp 00000000 08:01 10 /usr/lib/libjvm.so.bak\n"},
		{name: "anonymous", maps: "7f00-7f10 rw-p 00000000 00:00 0\n"},
		{name: "no newline at the end", want: true, maps: "7f00-7f10 r-xp 00000000 08:01 123 /j/libjvm.so"},
	} {
		if got := mapsLibJVM([]byte(tt.maps)); got != tt.want {
			t.Errorf("%s: got %v, want %v", tt.name, got, tt.want)
		}
	}
}
