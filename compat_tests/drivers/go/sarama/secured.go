// The sasl_scram and tls cells of the sarama driver: 10 records through a secured listener
// (compat_tests/security_listeners.py). sarama leaves SCRAM's arithmetic to the application (its SCRAMClient
// interface); scramClient below is RFC 5802's client side on the standard library.
package main

import (
	"crypto/hmac"
	"crypto/pbkdf2"
	"crypto/rand"
	"crypto/sha512"
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/IBM/sarama"

	c "wirebroker/compat/drivers/common"
)

func secured(scenario, bootstrapVariable string, secure func(*sarama.Config) error) c.Scenario {
	return func(bootstrap, prefix string) (string, error) {
		topic := c.TopicName(prefix, scenario)
		if err := createTopic(bootstrap, topic, 1); err != nil {
			return "", err
		}
		cfg := config()
		if err := secure(cfg); err != nil {
			return "", err
		}
		securedBootstrap := os.Getenv(bootstrapVariable)
		var want [][]byte
		var messages []*sarama.ProducerMessage
		for i := 0; i < c.RecordCount; i++ {
			want = append(want, []byte(fmt.Sprintf("secret-%d", i)))
			messages = append(messages, &sarama.ProducerMessage{Topic: topic, Partition: 0,
				Value: sarama.ByteEncoder(want[i])})
		}
		if err := produce(securedBootstrap, cfg, messages); err != nil {
			return "", err
		}
		got, err := consumeWith(cfg, securedBootstrap, topic, sarama.OffsetOldest, len(want), nil)
		if err != nil {
			return "", err
		}
		return c.CheckValues(values(got), want, scenario)
	}
}

func withScram(cfg *sarama.Config) error {
	cfg.Net.SASL.Enable = true
	cfg.Net.SASL.Mechanism = sarama.SASLTypeSCRAMSHA512
	cfg.Net.SASL.User = os.Getenv("COMPAT_SCRAM_USER")
	cfg.Net.SASL.Password = os.Getenv("COMPAT_SCRAM_PASSWORD")
	cfg.Net.SASL.SCRAMClientGeneratorFunc = func() sarama.SCRAMClient { return &scramClient{} }
	return nil
}

func withTLS(cfg *sarama.Config) error {
	pem, err := os.ReadFile(os.Getenv("COMPAT_TLS_CA"))
	if err != nil {
		return err
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(pem)
	cfg.Net.TLS.Enable = true
	cfg.Net.TLS.Config = &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}
	return nil
}

// scramClient is SCRAM-SHA-512's client (RFC 5802): client-first, then the proof for the server's challenge,
// then the server's signature checked.
type scramClient struct {
	user, password, clientFirstBare, authMessage string
	serverKey                                    []byte
	step                                         int
}

func (s *scramClient) Begin(user, password, _ string) error {
	s.user, s.password, s.step = user, password, 0
	return nil
}

func (s *scramClient) Step(challenge string) (string, error) {
	s.step++
	switch s.step {
	case 1:
		nonce := make([]byte, 24)
		if _, err := rand.Read(nonce); err != nil {
			return "", err
		}
		name := strings.NewReplacer("=", "=3D", ",", "=2C").Replace(s.user)
		s.clientFirstBare = "n=" + name + ",r=" + base64.RawStdEncoding.EncodeToString(nonce)
		return "n,," + s.clientFirstBare, nil
	case 2:
		fields := map[string]string{}
		for _, field := range strings.Split(challenge, ",") {
			if k, v, ok := strings.Cut(field, "="); ok {
				fields[k] = v
			}
		}
		salt, err := base64.StdEncoding.DecodeString(fields["s"])
		if err != nil {
			return "", err
		}
		iterations, err := strconv.Atoi(fields["i"])
		if err != nil {
			return "", err
		}
		salted, err := pbkdf2.Key(sha512.New, s.password, salt, iterations, sha512.Size)
		if err != nil {
			return "", err
		}
		clientKey := mac(salted, "Client Key")
		storedKey := sha512.Sum512(clientKey)
		withoutProof := "c=biws,r=" + fields["r"]
		s.authMessage = s.clientFirstBare + "," + challenge + "," + withoutProof
		signature := mac(storedKey[:], s.authMessage)
		proof := make([]byte, len(clientKey))
		for i := range clientKey {
			proof[i] = clientKey[i] ^ signature[i]
		}
		s.serverKey = mac(salted, "Server Key")
		return withoutProof + ",p=" + base64.StdEncoding.EncodeToString(proof), nil
	default:
		if challenge != "v="+base64.StdEncoding.EncodeToString(mac(s.serverKey, s.authMessage)) {
			return "", fmt.Errorf("the server's SCRAM signature does not match: %q", challenge)
		}
		return "", nil
	}
}

func (s *scramClient) Done() bool { return s.step >= 3 }

func mac(key []byte, message string) []byte {
	h := hmac.New(sha512.New, key)
	h.Write([]byte(message))
	return h.Sum(nil)
}
