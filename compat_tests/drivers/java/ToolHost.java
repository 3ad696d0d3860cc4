// Runs many invocations of Kafka's command-line tools in one JVM, for the matrix's drivers of those tools.
// A JVM start with Kafka's 92 jars costs 2-5 s on 2 busy cores; a tool's main() in a warm JVM costs well under one.
//
// Protocol (one JSON object per line, both ways):
//   stdin:  {"tool": "org.apache.kafka.tools.TopicCommand", "args": ["--list", ...], "stdin": "text or null"}
//   stdout: {"code": 0, "stdout": "...", "stderr": "..."}
// The tool's main() runs with System.in/out/err replaced for that call; Exit.exit/halt (how Kafka's tools end)
// become an exception, and the shutdown hooks a tool registers run when its call ends, with the call's streams
// (as they would at the exit of a JVM of its own: the verifiable tools print their summaries from them).
// The call's exit code is the first one the tool asked for: some tools (TopicCommand) call Exit.exit inside a
// block that catches Throwable and then exit again with 1. The host exits when its stdin closes. Compiled against
// the reference Kafka jars.

import java.io.BufferedReader;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import org.apache.kafka.common.utils.Exit;

public final class ToolHost {
    /** Thrown in place of the JVM exit a tool asks for. */
    static final class ExitCalled extends RuntimeException {
        ExitCalled(int code) {
            super("exit " + code, null, false, false);
        }
    }

    /** Shutdown hooks registered by the running tool. */
    static final List<Runnable> callHooks = new ArrayList<>();

    /** The first exit code the running tool asked for, or null. */
    static Integer requestedExit;

    static void exitRequested(int code) {
        if (requestedExit == null) requestedExit = code;
        throw new ExitCalled(code);
    }

    public static void main(String[] args) throws Exception {
        ObjectMapper json = new ObjectMapper();
        PrintStream realOut = System.out;
        InputStream realIn = System.in;
        PrintStream realErr = System.err;
        Exit.setExitProcedure((code, message) -> exitRequested(code));
        Exit.setHaltProcedure((code, message) -> exitRequested(code));
        Exit.setShutdownHookAdder((name, runnable) -> callHooks.add(runnable));
        BufferedReader commands = new BufferedReader(new InputStreamReader(realIn, StandardCharsets.UTF_8));
        String line;
        while ((line = commands.readLine()) != null) {
            if (line.isBlank()) continue;
            JsonNode command = json.readTree(line);
            List<String> toolArgs = new ArrayList<>();
            command.get("args").forEach(a -> toolArgs.add(a.asText()));
            JsonNode input = command.get("stdin");
            ByteArrayOutputStream out = new ByteArrayOutputStream();
            ByteArrayOutputStream err = new ByteArrayOutputStream();
            int code;
            requestedExit = null;
            callHooks.clear();
            try {
                System.setIn(new ByteArrayInputStream(input == null || input.isNull()
                        ? new byte[0] : input.asText().getBytes(StandardCharsets.UTF_8)));
                System.setOut(new PrintStream(out, true, StandardCharsets.UTF_8));
                System.setErr(new PrintStream(err, true, StandardCharsets.UTF_8));
                code = invoke(command.get("tool").asText(), toolArgs.toArray(new String[0]));
            } catch (Throwable t) {
                code = requestedExit != null ? requestedExit : 1;
                t.printStackTrace(System.err);
            } finally {
                runHooks();
                System.out.flush();
                System.err.flush();
                System.setIn(realIn);
                System.setOut(realOut);
                System.setErr(realErr);
            }
            Map<String, Object> result = new LinkedHashMap<>();
            result.put("code", code);
            result.put("stdout", out.toString(StandardCharsets.UTF_8));
            result.put("stderr", err.toString(StandardCharsets.UTF_8));
            realOut.println(json.writeValueAsString(result));
            realOut.flush();
        }
    }

    static void runHooks() {
        for (Runnable hook : callHooks) {
            try {
                hook.run();
            } catch (Throwable t) {
                t.printStackTrace(System.err);
            }
        }
        callHooks.clear();
    }

    static int invoke(String tool, String[] args) throws Exception {
        Method main = Class.forName(tool).getMethod("main", String[].class);
        try {
            main.invoke(null, (Object) args);
        } catch (InvocationTargetException e) {
            if (requestedExit == null) throw e;
        }
        return requestedExit == null ? 0 : requestedExit;
    }
}
